'use strict';

/**
 * Read the service configuration from environment variables.
 *
 * Every setting has a parser that turns the raw string into a value and
 * throws a ConfigError naming the variable when the string is malformed, so
 * a bad deploy fails at start-up instead of on the first request.
 */

class ConfigError extends Error {
  constructor(name, message) {
    super(`${name}: ${message}`);
    this.name = 'ConfigError';
    this.variable = name;
  }
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off']);
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

function parseBool(name, raw, fallback) {
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) {
    return true;
  }
  if (FALSE_WORDS.has(word)) {
    return false;
  }
  throw new ConfigError(name, `expected a boolean, got "${raw}"`);
}

function parseInteger(name, raw, fallback) {
  if (raw === undefined || raw === '') {
    return fallback;
  }
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new ConfigError(name, `expected an integer, got "${raw}"`);
  }
  return Number.parseInt(raw, 10);
}

function parsePort(name, raw) {
  const port = Number.parseInt(raw, 10);
  if (port < 1 || port > 65535) {
    throw new ConfigError(name, `port out of range: ${port}`);
  }
  return port;
}

function parseList(raw) {
  if (!raw) {
    return [];
  }
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function parseLogLevel(name, raw) {
  const level = (raw || 'info').toLowerCase();
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigError(name, `unknown log level "${raw}" (one of ${LOG_LEVELS.join(', ')})`);
  }
  return level;
}

/**
 * Build the configuration object from `env` (process.env by default).
 */
function loadConfig(env = process.env) {
  return {
    host: env.HOST || '0.0.0.0',
    port: parsePort('PORT', env.PORT),
    debug: parseBool('DEBUG', env.DEBUG, false),
    logLevel: parseLogLevel('LOG_LEVEL', env.LOG_LEVEL),
    workers: parseInteger('WORKERS', env.WORKERS, 2),
    requestTimeoutMs: parseInteger('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 15000),
    allowedOrigins: parseList(env.ALLOWED_ORIGINS),
    databaseUrl: env.DATABASE_URL || null,
  };
}

/**
 * A copy of the configuration that is safe to log: credentials in the
 * database URL are masked.
 */
function describeConfig(config) {
  const copy = { ...config };
  if (copy.databaseUrl) {
    copy.databaseUrl = copy.databaseUrl.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@');
  }
  return copy;
}

module.exports = {
  ConfigError,
  parseBool,
  parseInteger,
  parsePort,
  parseList,
  parseLogLevel,
  loadConfig,
  describeConfig,
};
