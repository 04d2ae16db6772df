import { realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projectRoot, withProjectPaths } from './paths.js';

describe('withProjectPaths', () => {
  it("names the project's files in a stack trace relative to its root, as ES module URLs and as paths, node_modules where they really are", () => {
    const modules = realpathSync(path.join(projectRoot, 'node_modules'));
    const trace = [
      'LimitExceeded: more pages (20000) than allowed (10000) on input resource big.pdf',
      `    at checkPdfPageCount (${pathToFileURL(path.join(projectRoot, 'dist/src/modules/conversion/limits.js')).href}:80:19)`,
      `    at ${pathToFileURL(path.join(projectRoot, 'dist/workers/render/render-process.js')).href}:36:62`,
      `    at Object.opened (${path.join(projectRoot, 'dist/src/modules/conversion/convert-job.js')}:256:34)`,
      `    at Agenda.run (${pathToFileURL(path.join(modules, 'agenda/dist/index.js')).href}:1:1)`,
      '    at process.processTicksAndRejections (node:internal/process/task_queues:104:5)',
    ].join('\n');
    expect(withProjectPaths(trace)).toBe(
      [
        'LimitExceeded: more pages (20000) than allowed (10000) on input resource big.pdf',
        '    at checkPdfPageCount (dist/src/modules/conversion/limits.js:80:19)',
        '    at dist/workers/render/render-process.js:36:62',
        '    at Object.opened (dist/src/modules/conversion/convert-job.js:256:34)',
        '    at Agenda.run (node_modules/agenda/dist/index.js:1:1)',
        '    at process.processTicksAndRejections (node:internal/process/task_queues:104:5)',
      ].join('\n'),
    );
  });
});
