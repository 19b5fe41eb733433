'use strict';

// Configuration of the image-resizing worker: a JSON file, then environment overrides.

const fs = require('fs');
const path = require('path');

const DEFAULTS = Object.freeze({
  port: 8080,
  concurrency: 4,
  maxPixels: 40_000_000,
  formats: ['jpeg', 'png', 'webp'],
  cacheDir: '/var/cache/resizer',
});

class ConfigError extends Error {
  constructor(message, file) {
    super(message);
    this.name = 'ConfigError';
    this.file = file;
  }
}

function validate(config, file) {
  if (!Number.isInteger(config.port) || config.port < 1 || config.port > 65535) {
    throw new ConfigError(`${file}: port must be an integer in 1..65535`, file);
  }
  if (!Number.isInteger(config.concurrency) || config.concurrency < 1) {
    throw new ConfigError(`${file}: concurrency must be a positive integer`, file);
  }
  if (!Array.isArray(config.formats) || config.formats.length === 0) {
    throw new ConfigError(`${file}: formats must be a non-empty list`, file);
  }
  return config;
}

function readJson(file) {
  const text = fs.readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file}: invalid JSON: ${err.message}`, file);
  }
}

function fromEnv(env) {
  const out = {};
  if (env.RESIZER_PORT) out.port = Number(env.RESIZER_PORT);
  if (env.RESIZER_CONCURRENCY) out.concurrency = Number(env.RESIZER_CONCURRENCY);
  if (env.RESIZER_CACHE_DIR) out.cacheDir = env.RESIZER_CACHE_DIR;
  return out;
}

/**
 * Load the configuration: DEFAULTS, then the file (if given), then the environment.
 * Relative cacheDir values are resolved against the config file's folder.
 */
function loadConfig(file, env = process.env) {
  let fromFile = {};
  if (file) {
    fromFile = readJson(file);
    if (fromFile === null || typeof fromFile !== 'object' || Array.isArray(fromFile)) {
      throw new ConfigError(`${file}: expected a JSON object`, file);
    }
    if (fromFile.cacheDir && !path.isAbsolute(fromFile.cacheDir)) {
      fromFile.cacheDir = path.resolve(path.dirname(file), fromFile.cacheDir);
    }
  }
  const config = { ...DEFAULTS, ...fromFile, ...fromEnv(env) };
  return validate(config, file || '<defaults>');
}

module.exports = { DEFAULTS, ConfigError, loadConfig, fromEnv };
