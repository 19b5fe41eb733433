/** Starting the server (./server): the command line, and failures that come at once. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { lastError, serverCommand, startServer } from '../src/server';
import { PYTHON } from './helpers';

describe('server command', () => {
  test('settings become flags only when set', () => {
    assert.deepEqual(serverCommand({ command: ['specedit', 'serve'] }), { file: 'specedit', args: ['serve'] });
    const full = serverCommand({
      command: ['/v/bin/specedit', 'serve'],
      socket: '/s/rpc.sock',
      model: 'qwen2.5-coder-0.5b',
      gpuLayers: 'all',
      backend: 'torch',
    });
    assert.deepEqual(full.args, [
      'serve', '--socket', '/s/rpc.sock', '--model', 'qwen2.5-coder-0.5b', '--gpu-layers', 'all', '--backend', 'torch',
    ]);
    assert.deepEqual(serverCommand({ command: ['x'], gpuLayers: 12, backend: null, model: '' }).args, ['--gpu-layers', '12']);
    assert.throws(() => serverCommand({ command: [] }), /empty/);
  });

  test('the last error line, joined when wrapped', () => {
    assert.equal(lastError(['INFO x', 'error: model file not found:', '/a/b.gguf']), 'error: model file not found: /a/b.gguf');
    assert.equal(lastError(['a', 'b', '']), 'b');
    assert.equal(lastError([]), null);
  });
});

describe('start failures come at once, with the reason', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-start-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const sock = path.join(tmp, 'run', 'rpc.sock');

  test('a missing specedit', async () => {
    const t = Date.now();
    await assert.rejects(
      startServer({ command: [path.join(tmp, 'no-such-specedit'), 'serve'] }, sock, { timeoutMs: 60_000 }),
      /cannot start the server: .*no-such-specedit: not found \(set specedit.command/,
    );
    assert.ok(Date.now() - t < 30_000, 'waited for the timeout instead of the error event');
  });

  test('a server that exits: its error, and its stderr in the output channel', async () => {
    const lines: string[] = [];
    const cmd = [PYTHON, '-m', 'specedit.app.cli', 'serve', '--model', path.join(tmp, 'none.gguf')];
    await assert.rejects(
      startServer({ command: cmd, socket: sock }, sock, { timeoutMs: 120_000, onStderr: (l) => lines.push(l) }),
      (err: unknown) => err instanceof Error && /the server exited \(status 1\): error: .*not found/.test(err.message),
    );
    assert.ok(lines.some((l) => l.includes('not found')), lines.join('\n'));
  });
});
