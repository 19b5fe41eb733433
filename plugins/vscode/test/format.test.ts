/** Display strings (./format), including the fields only newer servers send. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Done, Progress } from '../src/client';
import { formatDone, formatEngine, formatProgress, formatStatus, reviewLenses, thousands } from '../src/format';
import { addedText, Review } from '../src/review';

const P: Progress = {
  sessionId: 's',
  state: 'running',
  queuePosition: 0,
  generatedTokens: 1042,
  tokPerSec: 34.56,
  acceptance: 0.78,
  tokensPerStep: 2.5,
  elapsedMs: 10,
};

const DONE: Done = {
  sessionId: 's',
  status: 'ok',
  message: '',
  output: 'x',
  hunks: [{ id: 0, startLine: 0, endLine: 1, oldText: 'a\n', newText: 'b\n' }],
  validation: null,
  stats: { decode_tps: 31.24 },
};

describe('format', () => {
  test('progress: queue, reading, decode; an older server reads as before', () => {
    assert.equal(formatProgress(P), '1,042 tok · 34.6 tok/s · acceptance 78% · 2.50 tok/step');
    assert.equal(formatProgress({ ...P, state: 'queued', queuePosition: 2 }), 'queued (#2)');
    const reading = { ...P, phase: 'reading' as const, promptTokens: 1700, readTokens: 1234, readTokPerSec: 97.6 };
    assert.equal(formatProgress(reading), 'reading file 1,234/1,700 tokens, 98 tok/s');
    assert.equal(formatProgress({ ...reading, phase: 'generating' }), formatProgress(P));
    assert.equal(thousands(1234567), '1,234,567');
    const named = { ...reading, backend: 'llama.cpp', device: 'CPU', verifier: 'numpy' };
    assert.equal(formatProgress(named), 'reading file 1,234/1,700 tokens, 98 tok/s · llama.cpp on CPU, verifier numpy');
    // names not known yet ('') read as absent
    assert.equal(formatProgress({ ...reading, backend: '', device: '', verifier: '' }), formatProgress(reading));
  });

  test('done: engine names, truncated, suspect', () => {
    assert.deepEqual(formatDone(DONE), { text: '1 hunk(s), 31.2 tok/s', warning: false });
    const stats = { decode_tps: 31.24, backend: 'torch', device: 'cuda', verifier: 'triton', editMode: 'whole' };
    assert.equal(formatEngine(stats), 'torch on cuda, verifier triton, edit whole');
    assert.equal(formatDone({ ...DONE, stats }).text, '1 hunk(s), 31.2 tok/s, torch on cuda, verifier triton, edit whole');
    const t = formatDone({ ...DONE, status: 'truncated', output: null, message: 'raise maxTokens' });
    assert.ok(t.warning && t.text.startsWith('TRUNCATED: raise maxTokens;'), t.text);
    const s = formatDone({ ...DONE, suspect: { reason: 'drops_tail', message: 'it drops the last function', deletedLines: 9 } });
    assert.ok(s.warning && s.text.endsWith('WARNING: it drops the last function'), s.text);
    const bare = formatDone({ ...DONE, suspect: { reason: 'drops_share', message: '', deletedLines: 40 } });
    assert.match(bare.text, /deletes 40 line\(s\).*drops_share/);
    // made after the model's blocks were given up: the line that says so, after the figures
    const fell = { ...stats, given_up: 'blocks given up: block 1 of 1 cannot be placed' };
    assert.equal(
      formatDone({ ...DONE, stats: fell }).text,
      '1 hunk(s), 31.2 tok/s, torch on cuda, verifier triton, edit whole, blocks given up: block 1 of 1 cannot be placed',
    );
    assert.equal(formatDone({ ...DONE, stats: { ...stats, given_up: '' } }).text, formatDone({ ...DONE, stats }).text);
  });

  test('status bar', () => {
    assert.match(formatStatus({ server: 'disconnected' }).text, /circle-slash/);
    assert.match(formatStatus({ server: 'starting' }).text, /starting the server/);
    const ok = formatStatus({ server: 'connected', model: 'qwen2.5-coder-0.5b', backend: 'llama.cpp' });
    assert.equal(ok.text, '$(check) specedit: qwen2.5-coder-0.5b (llama.cpp)');
    assert.match(formatStatus({ server: 'error', error: 'boom' }).tooltip, /error: boom/);
    const busy = formatStatus({ server: 'connected', progress: { ...P, phase: 'reading', readTokens: 10, promptTokens: 20 } });
    assert.equal(busy.text, '$(sync~spin) specedit: reading file 10/20 tokens');
    const rev = formatStatus({ server: 'connected', review: { pending: 3, truncated: true, suspect: false } });
    assert.equal(rev.text, '$(diff) specedit: 3 hunk(s) to review · TRUNCATED');
  });
});

describe('review lenses and inline text', () => {
  const text = 'a\nb\nc\n';
  const hunks = [
    { id: 0, startLine: 0, endLine: 1, oldText: 'a\n', newText: 'A\nA2\n' },
    { id: 1, startLine: 2, endLine: 3, oldText: 'c\n', newText: 'C\n' },
  ];
  test('the whole-review lenses above the first pending hunk, then Accept/Reject per hunk', () => {
    const r = new Review(text, hunks);
    assert.deepEqual(reviewLenses(r, 3).map((l) => [l.line, l.title, l.args, l.hunkId]), [
      [0, 'specedit: Accept all', 'uri', undefined], [0, 'Reject all', 'uri', undefined],
      [0, 'Show diff', 'uri', undefined], [0, '✓ Accept', 'hunk', 0], [0, '✗ Reject', 'hunk', 0],
      [2, '✓ Accept', 'hunk', 1], [2, '✗ Reject', 'hunk', 1],
    ]);
    r.accept(0); // hunk 1 moves down a line
    assert.deepEqual(reviewLenses(r, 4).map((l) => l.line), [3, 3, 3, 3, 3]);
  });
  test('a truncated result offers no accept-all; a suspect one is flagged first', () => {
    const t = reviewLenses(new Review(text, hunks, { truncated: true }), 3).map((l) => l.title);
    assert.equal(t[0], '$(warning) TRUNCATED: review the hunks one by one');
    assert.ok(!t.includes('specedit: Accept all'));
    const suspect = { reason: 'drops_tail', deletedLines: 2, message: 'drops 2 lines' };
    const s = reviewLenses(new Review(text, hunks, { suspect }), 3);
    assert.deepEqual([s[0].title, s[0].command, s[1].title], ['$(warning) WARNING: drops 2 lines', 'specedit.showDiff', 'specedit: Accept all']);
  });
  test('the inline added text: the first line and how many more', () => {
    const [d0, d1] = new Review(text, hunks).decorations();
    assert.equal(addedText(d0), '  + A  (+1 more line(s))');
    assert.equal(addedText(d1), '  + C');
    assert.equal(addedText({ ...d1, added: [] }), '');
  });
});
