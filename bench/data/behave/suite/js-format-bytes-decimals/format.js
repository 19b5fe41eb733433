'use strict';

/**
 * Small formatting helpers shared by the CLI and the status page.
 *
 * Everything here is pure: no I/O, no globals, so it can be required from
 * both the server and the browser bundle.
 */

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/**
 * Format a byte count for humans: 1536 -> "1.5 KB".
 *
 * @param {number} bytes
 * @returns {string}
 */
function formatBytes(bytes) {
  if (!Number.isFinite(bytes) || bytes < 0) {
    throw new RangeError(`formatBytes: invalid byte count ${bytes}`);
  }
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

/**
 * Format a duration in milliseconds: 90061000 -> "1d 1h 1m 1s".
 * Durations under a second are shown in milliseconds.
 *
 * @param {number} ms
 * @returns {string}
 */
function formatDuration(ms) {
  if (ms < 1000) {
    return `${Math.round(ms)}ms`;
  }
  let seconds = Math.floor(ms / 1000);
  const parts = [];
  const steps = [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ];
  for (const [label, size] of steps) {
    const count = Math.floor(seconds / size);
    if (count > 0) {
      parts.push(`${count}${label}`);
      seconds -= count * size;
    }
  }
  return parts.join(' ');
}

/**
 * Pick the singular or plural form of a word for a count.
 *
 * @param {number} count
 * @param {string} singular
 * @param {string} [plural] defaults to singular + "s"
 * @returns {string} e.g. "1 file", "3 files"
 */
function pluralize(count, singular, plural) {
  const word = count === 1 ? singular : plural || `${singular}s`;
  return `${count} ${word}`;
}

/**
 * Shorten a string to at most `max` characters, ending with an ellipsis
 * when something was cut.
 *
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
function truncate(text, max) {
  if (text.length <= max) {
    return text;
  }
  if (max <= 1) {
    return text.slice(0, max);
  }
  return `${text.slice(0, max - 1)}…`;
}

/**
 * Lay out rows of cells as a plain-text table with columns padded to the
 * widest cell. Numbers are right-aligned, everything else left-aligned.
 *
 * @param {Array<Array<string|number>>} rows
 * @returns {string}
 */
function formatTable(rows) {
  const widths = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] || 0, String(cell).length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          typeof cell === 'number'
            ? String(cell).padStart(widths[i])
            : String(cell).padEnd(widths[i]),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

module.exports = {
  formatBytes,
  formatDuration,
  pluralize,
  truncate,
  formatTable,
};
