/**
 * The socket path agrees with the server's (app/server/paths.py, run with $SPECEDIT_PYTHON),
 * and a planted socket (a directory of another user, not 0700, or a symlink) is refused
 * before anything connects: the planted listener sees no connection and no byte.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { SpeceditClient } from '../src/client';
import { defaultSocketPath, readDiscovery, socketProblem, UnsafeSocketError } from '../src/paths';
import { startServer } from '../src/server';
import { PYTHON } from './helpers';

const OTHER_UID = 54321;

describe('default socket path', () => {
  const envs: NodeJS.ProcessEnv[] = [
    { XDG_RUNTIME_DIR: '/run/user/7' },
    { XDG_RUNTIME_DIR: '/run/user/7/' },
    { XDG_CACHE_HOME: '/xc', HOME: '/h' },
    { XDG_CACHE_HOME: '/xc//', HOME: '/h' },
    { HOME: '/h' },
    { HOME: '/h/', XDG_CACHE_HOME: 'rel', XDG_RUNTIME_DIR: 'rel' },
  ];
  for (const env of envs) {
    test(`agrees with the server: ${JSON.stringify(env)}`, () => {
      const full: NodeJS.ProcessEnv = { ...process.env, TMPDIR: '/shared-tmp' };
      delete full.XDG_RUNTIME_DIR;
      delete full.XDG_CACHE_HOME;
      Object.assign(full, env);
      const py = spawnSync(
        PYTHON,
        ['-c', 'from specedit.app.server.paths import default_socket_path; print(default_socket_path())'],
        { env: full, encoding: 'utf8' },
      );
      assert.equal(py.status, 0, py.stderr);
      const expected = py.stdout.trim();
      assert.equal(defaultSocketPath(full, 'linux'), expected);
      assert.ok(!expected.startsWith('/shared-tmp') && !expected.startsWith(os.tmpdir()));
    });
  }
});

/** A listening socket that records every connection and byte. */
async function plant(sock: string): Promise<{ server: net.Server; connections: number; bytes: number }> {
  const rec = { server: net.createServer(), connections: 0, bytes: 0 };
  rec.server.on('connection', (c) => {
    rec.connections += 1;
    c.on('data', (d) => (rec.bytes += d.length));
  });
  await new Promise<void>((resolve) => rec.server.listen(sock, resolve));
  return rec;
}

describe('planted sockets are refused', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-planted-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const cases: Array<[string, RegExp, (dir: string) => string]> = [
    ['another uid', new RegExp(`belongs to uid ${OTHER_UID}, not to you; refusing it`), (dir) => {
      fs.chownSync(dir, OTHER_UID, OTHER_UID);
      return path.join(dir, 'rpc.sock');
    }],
    ['mode 0755', /has mode 0755, not 0700; refusing it/, (dir) => {
      fs.chmodSync(dir, 0o755);
      return path.join(dir, 'rpc.sock');
    }],
    ['a symlink', /is a symlink; refusing it/, (dir) => {
      const link = `${dir}-link`;
      fs.symlinkSync(dir, link);
      return path.join(link, 'rpc.sock');
    }],
  ];
  for (const [name, why, make] of cases) {
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    test(name, { skip: name === 'another uid' && !root ? 'needs root to chown' : false }, async () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'd-'));
      fs.chmodSync(dir, 0o700);
      const sock = make(dir);
      fs.writeFileSync(path.join(dir, 'rpc.json'), JSON.stringify({ socket: sock, pid: 1 }));
      const rec = await plant(sock);
      try {
        assert.match(socketProblem(sock) ?? '', why);
        await assert.rejects(SpeceditClient.connect(sock), (err: unknown) => err instanceof UnsafeSocketError && why.test(err.message));
        const marker = path.join(tmp, `started-${name.replace(/\W/g, '')}`);
        await assert.rejects(
          startServer({ command: ['/bin/sh', '-c', `touch ${marker}`] }, sock, { timeoutMs: 5000 }),
          (err: unknown) => err instanceof UnsafeSocketError,
        );
        assert.equal(readDiscovery(sock), null);
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(rec.connections, 0, 'the client connected to a planted socket');
        assert.equal(rec.bytes, 0);
        assert.equal(fs.existsSync(marker), false, 'a server was started for a refused socket');
      } finally {
        rec.server.close();
      }
    });
  }

  test('a private directory of ours is fine; an absent one is no problem', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ok-'));
    fs.chmodSync(dir, 0o700);
    assert.equal(socketProblem(path.join(dir, 'rpc.sock')), null);
    assert.equal(socketProblem(path.join(dir, 'absent', 'rpc.sock')), null);
  });
});
