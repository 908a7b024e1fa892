import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder, lineSplitter, mimeTypeOf, pullRequestUrls, questionOf } from '../../src/cli/worker/output.js';

describe('the reference worker reading output', () => {
  it('reads a question line, with or without options', () => {
    expect(questionOf('::question::Which database?')).toEqual({ question: 'Which database?', options: [] });
    expect(questionOf('  ::question options=sqlite|postgres::Which one?')).toEqual({
      question: 'Which one?',
      options: ['sqlite', 'postgres'],
    });
    expect(questionOf('a ::question::in the middle')).toBeNull();
    expect(questionOf('::question::')).toBeNull();
  });

  it('splits chunks into lines, whatever the chunk boundaries', () => {
    const lines: string[] = [];
    const split = lineSplitter((l) => lines.push(l));
    for (const chunk of ['one\ntw', 'o\r\n', '', 'three']) split.push(chunk);
    expect(lines).toEqual(['one', 'two']);
    split.end();
    expect(lines).toEqual(['one', 'two', 'three']);
  });

  it('cuts an endless line into pieces of 16 KB', () => {
    const lines: string[] = [];
    const split = lineSplitter((l) => lines.push(l));
    split.push('x'.repeat(40 * 1024));
    expect(lines.map((l) => l.length)).toEqual([16 * 1024, 16 * 1024]);
    split.end();
    expect(lines.at(-1)!.length).toBe(8 * 1024);
  });

  it('finds GitHub and GitLab pull request links, and nothing else', () => {
    expect(pullRequestUrls('Opened https://github.com/acme/widgets/pull/42.')).toEqual([
      'https://github.com/acme/widgets/pull/42',
    ]);
    expect(
      pullRequestUrls(
        'MR: https://gitlab.example.com/group/sub/project/-/merge_requests/7 and http://ghe.local:8443/a/b/pull/1',
      ),
    ).toEqual(['https://gitlab.example.com/group/sub/project/-/merge_requests/7', 'http://ghe.local:8443/a/b/pull/1']);
    expect(
      pullRequestUrls('see https://github.com/acme/widgets/issues/3 or https://github.com/acme/widgets/pulls'),
    ).toEqual([]);
  });

  it('names MIME types by extension', () => {
    expect(mimeTypeOf('report.JSON')).toBe('application/json');
    expect(mimeTypeOf('shot.png')).toBe('image/png');
    expect(mimeTypeOf('blob')).toBe('application/octet-stream');
  });

  it('lists the regular files of a folder, never what a symbolic link points at', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-output-'));
    try {
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
      fs.writeFileSync(path.join(dir, 'sub', 'b.md'), 'b');
      fs.symlinkSync('/etc/hostname', path.join(dir, 'leak.txt'));
      expect(await filesUnder(dir)).toEqual(['a.txt', path.join('sub', 'b.md')]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
