'use strict';

/**
 * Relative-link checker for the docs site, run in CI before the site is built.
 *
 * Every inline Markdown link or image whose target is a relative path must point at a
 * file that exists. External links (http:, mailto: ...) are left to the nightly
 * crawler; links inside fenced code blocks are ignored.
 */

const fs = require('fs');
const path = require('path');

const LINK = /!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const FENCE = /^\s*(```|~~~)/;

function isExternal(target) {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/** The links of a Markdown text: [{ text, target, line }] in order. */
function extractLinks(markdown) {
  const links = [];
  let inFence = false;
  markdown.split(/\r?\n/).forEach((lineText, i) => {
    if (FENCE.test(lineText)) {
      inFence = !inFence;
      return;
    }
    if (inFence) {
      return;
    }
    for (const m of lineText.matchAll(LINK)) {
      links.push({ text: m[1], target: m[2], line: i + 1 });
    }
  });
  return links;
}

/** Where a relative target points, from the file that holds the link. */
function resolveTarget(fromFile, target, root) {
  const decoded = decodeURI(target.split('#')[0]);
  if (decoded.startsWith('/')) {
    return path.join(root || path.dirname(fromFile), decoded);
  }
  return path.resolve(path.dirname(fromFile), decoded);
}

/** The broken relative links of one file: [{ file, line, target }]. */
function checkFile(file, options = {}) {
  const text = fs.readFileSync(file, 'utf8');
  const broken = [];
  for (const link of extractLinks(text)) {
    if (isExternal(link.target) || link.target.startsWith('#')) {
      continue;
    }
    const where = resolveTarget(file, link.target, options.root);
    if (!fs.existsSync(where)) {
      broken.push({ file, line: link.line, target: link.target });
    }
  }
  return broken;
}

function checkFiles(files, options = {}) {
  return files.flatMap((f) => checkFile(f, options));
}

function formatReport(broken, cwd = process.cwd()) {
  if (broken.length === 0) {
    return 'all links ok';
  }
  return broken
    .map((b) => `${path.relative(cwd, b.file)}:${b.line}: broken link ${b.target}`)
    .join('\n');
}

function findMarkdown(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') {
      out.push(...findMarkdown(full));
    } else if (entry.isFile() && entry.name.endsWith('.md')) {
      out.push(full);
    }
  }
  return out.sort();
}

module.exports = { isExternal, extractLinks, resolveTarget, checkFile, checkFiles, formatReport, findMarkdown };

if (require.main === module) {
  const root = path.resolve(process.argv[2] || 'docs');
  const broken = checkFiles(findMarkdown(root), { root });
  console.log(formatReport(broken));
  process.exitCode = broken.length ? 1 : 0;
}
