"""Tags of the blog's posts: normalising, listing and the tag cloud.

A post is a dict with at least ``title``, ``slug``, ``tags`` (a list of
strings) and ``draft`` (bool).  Tags are compared after ``normalise_tag``.
"""

import re
from collections import Counter

TAG_RE = re.compile(r"[^a-z0-9]+")
CLOUD_SIZES = ("xs", "s", "m", "l", "xl")


def normalise_tag(tag):
    """Lower case, runs of other characters turned into single dashes."""
    return TAG_RE.sub("-", tag.lower()).strip("-")


def published(posts):
    return [p for p in posts if not p.get("draft")]


def post_tags(post):
    """The normalised, non-empty tags of one post, in the post's order."""
    out = []
    for tag in post.get("tags", ()):
        tag = normalise_tag(tag)
        if tag and tag not in out:
            out.append(tag)
    return out


def all_tags(posts):
    """The tags used by the published ``posts``, for the tag index page."""
    tags = []
    for post in published(posts):
        tags.extend(post_tags(post))
    return tags


def posts_with_tag(posts, tag):
    tag = normalise_tag(tag)
    return [p for p in published(posts) if tag in post_tags(p)]


def tag_counts(posts):
    return Counter(t for p in published(posts) for t in post_tags(p))


def tag_cloud(posts):
    """(tag, size class) pairs: the most used tags get the biggest class."""
    counts = tag_counts(posts)
    if not counts:
        return []
    low, high = min(counts.values()), max(counts.values())
    span = max(1, high - low)
    cloud = []
    for tag, n in sorted(counts.items()):
        index = round((n - low) / span * (len(CLOUD_SIZES) - 1))
        cloud.append((tag, CLOUD_SIZES[index]))
    return cloud


def related_posts(posts, post, limit=3):
    """Other published posts sharing the most tags with ``post``."""
    mine = set(post_tags(post))
    scored = []
    for other in published(posts):
        if other["slug"] == post["slug"]:
            continue
        shared = len(mine & set(post_tags(other)))
        if shared:
            scored.append((-shared, other["title"], other))
    return [o for _s, _t, o in sorted(scored, key=lambda x: (x[0], x[1]))[:limit]]
