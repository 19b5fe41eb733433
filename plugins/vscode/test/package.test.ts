/**
 * `npm run package` (vsce package) accepts the extension (engines.vscode vs @types/vscode, icon,
 * license, categories) without a prompt or a warning, and the .vsix holds what the extension
 * needs and no sources. The manifest claims no repository URL: the package script allows the
 * missing one (--allow-missing-repository) instead of naming a repository we do not own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import * as zlib from 'node:zlib';
import { EXT } from './helpers';

/** The entries of a zip file (enough of the format for a .vsix: stored or deflated). */
function readZip(buf: Buffer): Map<string, Buffer> {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(eocd >= 0, 'not a zip file');
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(at), 0x02014b50);
    const method = buf.readUInt16LE(at + 10);
    const size = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    const data = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(data, data + size);
    out.set(name, method === 8 ? zlib.inflateRawSync(raw) : raw);
    at += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

test('vsce package', { timeout: 300_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-vsix-'));
  try {
    const vsix = path.join(dir, 'specedit.vsix');
    const run = spawnSync('npm', ['run', '--silent', 'package', '--', '--out', vsix], {
      cwd: EXT,
      encoding: 'utf8',
      timeout: 240_000,
      stdio: ['ignore', 'pipe', 'pipe'], // a prompt would read end-of-file: no hang
    });
    const log = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, log);
    assert.doesNotMatch(log, /WARNING/, log);
    const files = readZip(fs.readFileSync(vsix));
    const manifest = JSON.parse(files.get('extension/package.json')!.toString('utf8'));
    assert.equal(manifest.icon, 'images/icon.png');
    assert.equal(manifest.repository, undefined);
    assert.ok(manifest.categories.length > 0);
    const icon = files.get('extension/images/icon.png');
    assert.ok(icon && icon.subarray(1, 4).toString() === 'PNG', 'the icon is a PNG');
    for (const f of ['extension/out/src/extension.js', 'extension/out/src/client.js', 'extension/LICENSE.txt']) {
      assert.ok(files.has(f) || files.has(f.replace('.txt', '')), `${f} missing: ${[...files.keys()].join(' ')}`);
    }
    assert.ok([...files.keys()].some((f) => f.startsWith('extension/node_modules/vscode-jsonrpc/')));
    for (const f of files.keys()) {
      assert.ok(!/\/(src|test)\/.*\.ts$|\.map$|out\/test\//.test(f), `${f} should not be packaged`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
