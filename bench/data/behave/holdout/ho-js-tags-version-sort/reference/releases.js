'use strict';

/*
 * Helpers for the release script: which tags are releases, in what order, what the
 * next version should be, and the heading of each changelog section.
 */

const TAG_RE = /^v(\d+)\.(\d+)\.(\d+)$/;

function isReleaseTag(tag) {
  return TAG_RE.test(tag);
}

/** [major, minor, patch] of a release tag such as "v1.4.2". */
function parseVersion(tag) {
  const m = TAG_RE.exec(tag);
  if (!m) {
    throw new Error(`not a release tag: ${tag}`);
  }
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

function formatVersion([major, minor, patch]) {
  return `v${major}.${minor}.${patch}`;
}

/** The release tags among `tags` (the output of `git tag`), oldest release first. */
function sortTags(tags) {
  return tags.filter(isReleaseTag).sort((a, b) => {
    const va = parseVersion(a);
    const vb = parseVersion(b);
    return va[0] - vb[0] || va[1] - vb[1] || va[2] - vb[2];
  });
}

function latestTag(tags) {
  const sorted = sortTags(tags);
  return sorted.length ? sorted[sorted.length - 1] : null;
}

/**
 * The next version after `tag` for a set of commit subjects: a "feat!" or
 * "BREAKING CHANGE" bumps major, a "feat" minor, anything else patch.
 */
function nextVersion(tag, subjects) {
  const [major, minor, patch] = tag ? parseVersion(tag) : [0, 0, 0];
  if (subjects.some((s) => /^\w+(\(.+\))?!:/.test(s) || s.includes('BREAKING CHANGE'))) {
    return formatVersion([major + 1, 0, 0]);
  }
  if (subjects.some((s) => /^feat(\(.+\))?:/.test(s))) {
    return formatVersion([major, minor + 1, 0]);
  }
  return formatVersion([major, minor, patch + 1]);
}

function sectionTitle(tag, date) {
  const day = date.toISOString().slice(0, 10);
  return `## ${tag.slice(1)} (${day})`;
}

/** Pairs [previous, current] of consecutive releases, for "changes since" ranges. */
function releaseRanges(tags) {
  const sorted = sortTags(tags);
  return sorted.map((tag, i) => [i === 0 ? null : sorted[i - 1], tag]);
}

module.exports = {
  isReleaseTag,
  parseVersion,
  formatVersion,
  sortTags,
  latestTag,
  nextVersion,
  sectionTitle,
  releaseRanges,
};
