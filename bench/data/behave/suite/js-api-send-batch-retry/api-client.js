'use strict';

/**
 * Client for the metrics ingestion API.
 *
 * The transport is injected (see `createClient`) so the same client runs on
 * top of node's http module in production and on a stub in tests. A
 * transport has one method, `send(method, url, body, { timeoutMs })`, that
 * resolves to `{ status, body }` or rejects with an error carrying `code`
 * (ECONNRESET...) or `status`.
 */

const DEFAULTS = {
  baseUrl: 'http://localhost:9400',
  timeoutMs: 5000,
  cacheTtlMs: 5000,
  retries: 3,
  retryDelayMs: 200,
  maxBatch: 500,
};

const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE']);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Whether a failed request is worth trying again: network errors, 429 and 5xx.
 */
function isRetryable(err) {
  if (!err) {
    return false;
  }
  if (RETRYABLE_CODES.has(err.code)) {
    return true;
  }
  return err.status === 429 || (err.status >= 500 && err.status < 600);
}

/**
 * Delay before retry number `attempt` (0-based): exponential with a cap.
 */
function backoffDelay(attempt, baseDelayMs, maxDelayMs = 10000) {
  return Math.min(baseDelayMs * 2 ** attempt, maxDelayMs);
}

/**
 * Call `fn` until it resolves, retrying retryable errors up to `retries`
 * times with exponential backoff. Other errors are rethrown at once.
 */
async function withRetry(fn, { retries = 3, baseDelayMs = 200, sleepFn = sleep } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= retries || !isRetryable(err)) {
        throw err;
      }
      await sleepFn(backoffDelay(attempt, baseDelayMs));
    }
  }
}

function joinUrl(baseUrl, path) {
  return `${baseUrl.replace(/\/+$/, '')}/${String(path).replace(/^\/+/, '')}`;
}

function checkStatus(response, url) {
  if (response.status >= 400) {
    const err = new Error(`request to ${url} failed with status ${response.status}`);
    err.status = response.status;
    throw err;
  }
  return response;
}

/**
 * Make a client. `options` overrides DEFAULTS; `options.transport` is required.
 */
function createClient(options = {}) {
  if (!options.transport) {
    throw new TypeError('createClient: a transport is required');
  }
  const client = { ...DEFAULTS, ...options, cache: new Map() };
  return client;
}

/**
 * GET a resource, served from the cache while it is younger than cacheTtlMs.
 */
async function get(client, path, now = Date.now()) {
  const url = joinUrl(client.baseUrl, path);
  const hit = client.cache.get(url);
  if (hit && now - hit.at < client.cacheTtlMs) {
    return hit.body;
  }
  const response = await withRetry(
    () => client.transport.send('GET', url, null, { timeoutMs: client.timeoutMs }),
    { retries: client.retries, baseDelayMs: client.retryDelayMs },
  );
  checkStatus(response, url);
  client.cache.set(url, { at: now, body: response.body });
  return response.body;
}

/**
 * Split `points` into batches of at most `size`.
 */
function chunk(points, size) {
  const batches = [];
  for (let i = 0; i < points.length; i += size) {
    batches.push(points.slice(i, i + size));
  }
  return batches;
}

/**
 * POST metric points in batches of client.maxBatch. Resolves to the number
 * of points sent.
 */
async function sendBatch(client, points) {
  const url = joinUrl(client.baseUrl, '/v1/points');
  let sent = 0;
  for (const batch of chunk(points, client.maxBatch)) {
    const response = await client.transport.send('POST', url, JSON.stringify(batch), {
      timeoutMs: client.timeoutMs,
    });
    checkStatus(response, url);
    sent += batch.length;
  }
  return sent;
}

module.exports = {
  DEFAULTS,
  isRetryable,
  backoffDelay,
  withRetry,
  joinUrl,
  createClient,
  get,
  chunk,
  sendBatch,
};
