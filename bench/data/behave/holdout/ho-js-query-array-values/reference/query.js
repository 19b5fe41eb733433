'use strict';

/**
 * Query-string helpers for the dashboard's API client.
 *
 * The backend reads repeated keys as lists (`?status=open&status=held`), ignores
 * empty values, and expects spaces as %20 (not '+').
 */

const SAFE = /[!'()*]/g;

function encode(value) {
  return encodeURIComponent(String(value)).replace(SAFE, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

function isEmpty(value) {
  return value === undefined || value === null || value === '';
}

function formatValue(value) {
  if (value instanceof Date) {
    return value.toISOString();
  }
  if (typeof value === 'boolean') {
    return value ? 'true' : 'false';
  }
  return String(value);
}

/**
 * Build a query string (without the leading '?') from a plain object.
 * Keys keep their insertion order; empty values are left out.
 */
function buildQuery(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params || {})) {
    if (isEmpty(value)) {
      continue;
    }
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      parts.push(`${encode(key)}=${encode(formatValue(item))}`);
    }
  }
  return parts.join('&');
}

/** Parse a query string into an object; repeated keys give arrays. */
function parseQuery(qs) {
  const out = {};
  const text = qs.startsWith('?') ? qs.slice(1) : qs;
  if (!text) {
    return out;
  }
  for (const piece of text.split('&')) {
    if (!piece) continue;
    const eq = piece.indexOf('=');
    const key = decodeURIComponent(eq === -1 ? piece : piece.slice(0, eq));
    const value = eq === -1 ? '' : decodeURIComponent(piece.slice(eq + 1).replace(/\+/g, ' '));
    if (Object.prototype.hasOwnProperty.call(out, key)) {
      out[key] = [].concat(out[key], value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** `url` with `params` appended (merged after any query it already has). */
function withQuery(url, params) {
  const qs = buildQuery(params);
  if (!qs) {
    return url;
  }
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return base + sep + qs + fragment;
}

module.exports = { encode, buildQuery, parseQuery, withQuery };
