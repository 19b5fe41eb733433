/**
 * The client module against a real `specedit serve` (the 0.5B catalog model) on a temp socket.
 * The server runs from the repository's venv (../../.venv) or $SPECEDIT_PYTHON.
 */
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { errorCode, isContentModified, Progress, SpeceditClient } from '../src/client';
import { readDiscovery } from '../src/paths';
import { applyHunks, Review, splitLines } from '../src/review';
import { connectWhenUp, PYTHON } from './helpers';

const MODEL = process.env.SPECEDIT_TEST_MODEL || 'qwen2.5-coder-0.5b';
const TEXT = 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n';
const RANGE = { startLine: 0, endLine: 2 };
const INSTRUCTION = 'Rename the function add to plus';

describe('against specedit serve', { timeout: 600_000 }, () => {
  let dir: string;
  let socket: string;
  let server: ChildProcess;
  let client: SpeceditClient;
  let serverLog = '';

  before(async () => {
    // pull the catalog model on first use (a no-op once it is installed)
    const pull = spawnSync(
      PYTHON,
      ['-c', `from specedit.models.catalog import ensure_model; ensure_model(${JSON.stringify(MODEL)})`],
      { encoding: 'utf8', timeout: 600_000 },
    );
    assert.equal(pull.status, 0, `cannot get ${MODEL} with ${PYTHON}: ${pull.stderr}`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-vscode-'));
    socket = path.join(dir, 'run', 'rpc.sock');
    server = spawn(
      PYTHON,
      ['-m', 'specedit.app.cli', 'serve', '--model', MODEL, '--socket', socket, '--ctx', '2048',
       '--log-file', path.join(dir, 'server.log')],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        // backups of the test's own files stay in the temp dir
        env: { ...process.env, SPECEDIT_BACKUP_DIR: path.join(dir, 'backups') },
      },
    );
    server.stderr?.on('data', (d: Buffer) => (serverLog += d.toString()));
    client = await connectWhenUp(server, socket, 300_000, 250, 'specedit serve', () => serverLog);
  });

  after(async () => {
    if (client && !client.isClosed) {
      await client.shutdownServer().catch(() => undefined);
      client.dispose();
    }
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      const timer = setTimeout(() => server.kill('SIGTERM'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    assert.equal(fs.existsSync(socket), false, 'the server removes its socket');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('initialize and discovery', async () => {
    const info = await client.initialize('node-test', '1');
    assert.equal(info.server, 'specedit');
    assert.equal(info.protocolVersion, 1);
    assert.equal(info.model, MODEL);
    const disc = readDiscovery(socket);
    assert.ok(disc);
    assert.equal(disc.socket, socket);
    assert.equal(disc.pid, server.pid);
    assert.equal(fs.statSync(socket).mode & 0o777, 0o600);
  });

  test('rewrite a range: progress, done, hunks apply to the buffer, then to disk', async () => {
    const progress: Progress[] = [];
    const handle = client.rewrite(
      { text: TEXT, instruction: INSTRUCTION, path: 'm.py', range: RANGE, options: { maxTokens: 24 } },
      { onProgress: (p) => progress.push(p) },
    );
    const started = await handle.started;
    assert.match(started.sessionId, /^s\d+-/);
    const done = await handle.done;
    assert.equal(done.status, 'ok', done.message);
    assert.ok(done.output?.startsWith('def plus(a, b):\n'));
    assert.ok(done.hunks.length >= 1);
    assert.equal(applyHunks(TEXT, done.hunks), done.output);
    assert.equal(applyHunks(TEXT, done.hunks, []), TEXT);
    // the extension applies each accepted hunk at once, from the last to the first here
    const review = new Review(TEXT, done.hunks);
    let doc = TEXT;
    for (const h of [...done.hunks].reverse()) {
      const e = review.accept(h.id)!;
      const lines = splitLines(doc);
      lines.splice(e.startLine, e.endLine - e.startLine, ...splitLines(e.newText));
      doc = lines.join('');
    }
    assert.equal(doc, done.output);
    assert.ok(review.finished);
    assert.ok(progress.length >= 1);
    assert.equal(done.validation?.language, 'python');

    const file = path.join(dir, 'm.py');
    fs.writeFileSync(file, TEXT);
    const sha = createHash('sha256').update(TEXT).digest('hex');
    assert.equal(sha.length, 64);
    const res = await client.apply(started.sessionId, file);
    assert.equal(fs.readFileSync(file, 'utf8'), done.output);
    assert.ok(res.backup && fs.readFileSync(res.backup, 'utf8') === TEXT);
    await assert.rejects(client.apply(started.sessionId, file), (err: unknown) => isContentModified(err));
  });

  test('a warm-up leaves only the range and the instruction to prefill', async () => {
    const text = TEXT.repeat(8);
    const w = await client.warm({ text, path: 'w.py' });
    assert.equal(w.status, 'done', w.message ?? '');
    assert.ok((w.prefixTokens ?? 0) > 100);
    assert.equal((await client.warm({ text, path: 'w.py' })).status, 'cached');
    const done = await client.rewrite({ text, instruction: INSTRUCTION, path: 'w.py', range: RANGE, options: { maxTokens: 24 } }).done;
    assert.equal(done.status, 'ok', done.message);
    assert.ok((done.stats.cached_tokens as number) >= (w.prefixTokens ?? 0));
    // with the range too, the rewrite of that range prefills only its instruction
    const range = { startLine: 4, endLine: 6 };
    assert.equal((await client.warm({ text, path: 'w.py', range })).status, 'done');
    const again = await client.rewrite({ text, instruction: INSTRUCTION, path: 'w.py', range, options: { maxTokens: 24 } }).done;
    assert.equal(again.status, 'ok', again.message);
    assert.ok((again.stats.prompt_tokens as number) < 40);
    await assert.rejects(client.warm({ text: ' ' }), (err: unknown) => errorCode(err) === -32602);
  });

  test('cancel a running rewrite', async () => {
    const handle = client.rewrite({ text: TEXT, instruction: 'Add a docstring to every function', path: 'm.py' });
    await handle.started;
    await handle.cancel();
    const done = await handle.done;
    assert.equal(done.status, 'cancelled');
    assert.equal(done.output, null);
  });

  test('bad params are JSON-RPC errors', async () => {
    const handle = client.rewrite({ text: TEXT, instruction: '' });
    await assert.rejects(handle.started, (err: unknown) => errorCode(err) === -32602);
    await assert.rejects(handle.done);
    await assert.rejects(client.connection.sendRequest('no/such'), (err: unknown) => errorCode(err) === -32601);
  });
});
