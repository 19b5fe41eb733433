/** Hunk arithmetic and the review state (./review), without a server. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Hunk } from '../src/client';
import { applyHunks, Edit, previewDecorations, Review, splitLines } from '../src/review';

const OLD = 'a\nb\nc\nd';
const HUNKS: Hunk[] = [
  { id: 0, startLine: 0, endLine: 1, oldText: 'a\n', newText: 'A\nA2\n' },
  { id: 1, startLine: 2, endLine: 2, oldText: '', newText: 'x\n' },
  { id: 2, startLine: 3, endLine: 4, oldText: 'd', newText: 'D' },
];

/** What the editor does with an Edit: replace lines [startLine, endLine) of `text`. */
function edit(text: string, e: Edit): string {
  const lines = splitLines(text);
  lines.splice(e.startLine, e.endLine - e.startLine, ...splitLines(e.newText));
  return lines.join('');
}

describe('hunk arithmetic', () => {
  test('splitLines keeps newlines and a last partial line', () => {
    assert.deepEqual(splitLines('a\nb'), ['a\n', 'b']);
    assert.deepEqual(splitLines(''), []);
    assert.deepEqual(splitLines('\n'), ['\n']);
  });
  test('all, none and any subset of hunks', () => {
    assert.equal(applyHunks(OLD, HUNKS), 'A\nA2\nb\nx\nc\nD');
    assert.equal(applyHunks(OLD, HUNKS, []), OLD);
    assert.equal(applyHunks(OLD, HUNKS, [1]), 'a\nb\nx\nc\nd');
    assert.equal(applyHunks(OLD, HUNKS, [0, 2]), 'A\nA2\nb\nc\nD');
  });
  test('stale and overlapping hunks throw', () => {
    assert.throws(() => applyHunks('z\nb\nc\nd', HUNKS, [0]), /stale/);
    const overlap = [HUNKS[0], { ...HUNKS[0], id: 9 }];
    assert.throws(() => applyHunks(OLD, overlap), /overlap/);
    assert.throws(() => applyHunks('a', [{ id: 3, startLine: 4, endLine: 5, oldText: '', newText: '' }]), /range/);
  });
});

describe('review', () => {
  test('each accepted hunk is an edit of the current document, in any order', () => {
    const orders = [[0, 1, 2], [2, 1, 0], [1, 0, 2], [2, 0], [1], [0, 2, 1]];
    for (const order of orders) {
      const r = new Review(OLD, HUNKS);
      let doc = OLD;
      for (const id of order) {
        const e = r.accept(id);
        assert.ok(e);
        doc = edit(doc, e);
        assert.equal(doc, r.current, `order ${order}`);
      }
      assert.equal(doc, applyHunks(OLD, HUNKS, order));
      assert.equal(r.accept(order[0]), null); // decided already
    }
  });

  test('reject leaves the document; the proposal drops the rejected hunk; finish', () => {
    const r = new Review(OLD, HUNKS);
    assert.equal(r.reject(1), true);
    assert.equal(r.current, OLD);
    assert.equal(r.proposed(), applyHunks(OLD, HUNKS, [0, 2]));
    r.accept(0);
    assert.equal(r.finished, false);
    r.rejectAll();
    assert.equal(r.finished, true);
    assert.deepEqual(r.counts(), { accepted: 1, rejected: 2, pending: 0 });
  });

  test('accept-all: edits against one version, applied bottom-up', () => {
    const r = new Review(OLD, HUNKS);
    r.accept(0); // shifts the others by one line
    const before = r.current;
    const edits = r.acceptAll();
    assert.deepEqual(edits.map((e) => e.hunkId), [2, 1]);
    assert.equal(edits.reduce(edit, before), applyHunks(OLD, HUNKS));
    assert.equal(r.current, applyHunks(OLD, HUNKS));
    assert.equal(r.finished, true);
  });

  test('truncated: no accept-all, one by one is fine; suspect: asks first', () => {
    const t = new Review(OLD, HUNKS.slice(0, 1), { truncated: true });
    assert.match(t.acceptAllBlocked() ?? '', /truncated/);
    assert.throws(() => t.acceptAll(), /truncated/);
    assert.ok(t.accept(0));
    const s = new Review(OLD, HUNKS, { suspect: { reason: 'drops_tail', message: 'drops d', deletedLines: 1 } });
    assert.equal(s.acceptAllBlocked(), null);
    assert.equal(s.needsConfirmation(), true);
    assert.equal(new Review(OLD, HUNKS).needsConfirmation(), false);
  });

  test('a result that does not fit the text is refused', () => {
    assert.throws(() => new Review('z\nb\nc\nd', HUNKS), /stale/);
  });

  test('hunk under the cursor and next/previous, in current lines', () => {
    const r = new Review(OLD, HUNKS);
    assert.equal(r.hunkAt(0)?.id, 0);
    assert.equal(r.hunkAt(2)?.id, 1); // an insertion counts at its line
    r.accept(0); // 'A\nA2\nb\nc\nd': the insertion is now before line 3, d at line 4
    assert.equal(r.hunkAt(3)?.id, 1);
    assert.equal(r.hunkAt(4)?.id, 2);
    assert.equal(r.hunkAt(0), undefined);
    assert.equal(r.next(0, 1)?.id, 1);
    assert.equal(r.next(3, 1)?.id, 2);
    assert.equal(r.next(4, 1)?.id, 1); // wraps around
    assert.equal(r.next(4, -1)?.id, 1);
    assert.equal(r.next(0, -1)?.id, 2); // wraps around
  });

  test('decorations of pending hunks follow the accepted ones', () => {
    const r = new Review(OLD, HUNKS);
    r.accept(0);
    assert.deepEqual(r.decorations(), [
      { hunkId: 1, removed: null, added: ['x'], anchorLine: 2, anchorBefore: false },
      { hunkId: 2, removed: { startLine: 4, endLine: 5 }, added: ['D'], anchorLine: 4, anchorBefore: false },
    ]);
  });

  test('a streamed preview is drawn only where its old lines still are', () => {
    const top: Hunk = { id: 0, startLine: 0, endLine: 0, oldText: '', newText: 'header\n' };
    assert.deepEqual(previewDecorations(OLD, [top, HUNKS[2]]), [
      { hunkId: 0, removed: null, added: ['header'], anchorLine: 0, anchorBefore: true },
      { hunkId: 2, removed: { startLine: 3, endLine: 4 }, added: ['D'], anchorLine: 3, anchorBefore: false },
    ]);
    assert.deepEqual(previewDecorations('a\nb\nc\nchanged', [HUNKS[2]]), []);
  });
});
