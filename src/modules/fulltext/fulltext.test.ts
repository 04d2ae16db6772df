import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, sql } from '../../../test/helpers/entries.js';
import { buildPdf, textPage } from '../../../test/helpers/pdf.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';
import { docx, zip } from '../../../test/helpers/zip.js';
import { extractionClient, extractionWindowMs, saveResourceTexts } from './operations.js';

let service: TestService;
const maxChars = 5_000;

beforeAll(async () => {
  service = await startTestService({
    FULLTEXT_MAX_TEXT_CHARS: String(maxChars),
    FULLTEXT_EXTRACT_MEMORY_MB: '200',
    // the zip bomb must meet its memory bound before the deadline also on a loaded machine (at load 15–26
    // the child did not inflate 200 MB within 4 s, twice in the full suite)
    FULLTEXT_EXTRACT_TIMEOUT_MS: '20000',
    FULLTEXT_SWEEP_MS: '500',
  });
});
afterAll(() => service?.stop());

/** The extraction job of a content's latest resource, once it has ended (state and result). */
async function extractionOf(contentId: string, timeoutMs = 60_000, on: TestService = service): Promise<{ id: string; state: string; reason_code: string | null; error_message: string | null; serialized_result: any }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [job] = await sql<any>(
      on,
      `select id, state, reason_code, error_message, serialized_result from service_job
        where job_name = 'extractText' and ? = any(content_ids) order by created_at desc limit 1`,
      [contentId],
    );
    if (job && ['Done', 'panic'].includes(job.state)) return job;
    if (Date.now() > until) throw new Error(`extraction of ${contentId} still ${job?.state ?? 'unrecorded'}`);
    await sleep(100);
  }
}

const byCondition = (condition: string) => call(contentUrl(service, '/content/search/by-condition', { condition, limit: 1000 }));
const namesFound = async (condition: string) => {
  const { status, body } = await byCondition(condition);
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.entries as { name: string }[]).map((e) => e.name).sort();
};

async function indexed(name: string, bytes: Buffer | string, mimeType?: string) {
  const content = await newContent(service, { name, bytes, mimeType });
  const job = await extractionOf(content.id);
  expect(job.state, JSON.stringify(job)).toBe('Done');
  return content;
}

describe('text extraction (a background job per new version)', () => {
  // eight uploads, each waited for until its text is extracted: 24.5 s at load 12
  it('reads txt, md, html, csv, json, xml, pdf and docx, and fullText() finds each by a word of its text', { timeout: 120_000 }, async () => {
    await indexed('plain.txt', 'alpha plainword omega', 'text/plain');
    await indexed('notes.md', '# Title\n\nsome *markdownword* here', 'text/markdown');
    await indexed('page.html', '<html><head><style>.stylejunk{}</style><script>var scriptjunk=1</script></head><body><p>htmlword &amp; more</p></body></html>', 'text/html');
    await indexed('table.csv', 'id,label\n1,csvword\n', 'text/csv');
    await indexed('data.json', '{"key": "jsonword"}', 'application/json');
    await indexed('doc.xml', '<root><item attr="attrjunk">xmlword</item></root>', 'application/xml');
    await indexed('report.pdf', buildPdf([textPage(['The pdfword is on page one'])]), 'application/pdf');
    await indexed('letter.docx', docx(['Dear docxword reader']), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    for (const [word, name] of Object.entries({
      plainword: 'plain.txt',
      markdownword: 'notes.md',
      htmlword: 'page.html',
      csvword: 'table.csv',
      jsonword: 'data.json',
      xmlword: 'doc.xml',
      pdfword: 'report.pdf',
      docxword: 'letter.docx',
    })) {
      expect(await namesFound(`fullText('${word}')`), word).toEqual([name]);
    }
    // markup is not text: script, style and attributes are not indexed
    expect(await namesFound(`fullText('scriptjunk') or fullText('stylejunk') or fullText('attrjunk')`)).toEqual([]);
  });

  it('phrases in quotes, word prefixes, exclusions, and combination with other terms', async () => {
    await indexed('fox1.txt', 'the quick brown fox jumps');
    await indexed('fox2.txt', 'brown quick foxes sleep');
    expect(await namesFound(`fullText('"quick brown"')`)).toEqual(['fox1.txt']);
    expect(await namesFound(`fullText('quick brown')`)).toEqual(['fox1.txt', 'fox2.txt']);
    expect(await namesFound(`fullText('fox*')`)).toEqual(['fox1.txt', 'fox2.txt']);
    expect(await namesFound(`fullText('quick -jumps')`)).toEqual(['fox2.txt']);
    expect(await namesFound(`fullText('quick -jump*')`)).toEqual(['fox2.txt']);
    expect(await namesFound(`fullText('brown') and name = 'fox2.txt'`)).toEqual(['fox2.txt']);
    // the name's words still count
    expect(await namesFound(`fullText('fox1')`)).toEqual(['fox1.txt']);
    // query syntax in the text is only text: no error, no injection
    expect((await byCondition(`fullText('a:* & !b | (c'' --')`)).status).toBe(200);
    // a prefix word holding a backslash or a quote is one operand too (a backslash was a 500: a fuzz find)
    for (const word of ['\\!*', "o''bri*", '\\*', "''*", 'fo\\x*']) expect((await byCondition(`not not fullText('${word}')`)).status, word).toBe(200);
    expect((await byCondition(`fullText('x* y* ${Array.from({ length: 20 }, (_, i) => `w${i}*`).join(' ')}')`)).status).toBe(400);
  });

  it('finds words whatever their Unicode form, HTML entity or byte order mark', async () => {
    await indexed('nfd.txt', 're\u0301sume\u0301word here', 'text/plain');
    await indexed('entities.html', '<p>caf&eacute;word na&iuml;veword</p>', 'text/html');
    await indexed('bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bomword rest')]), 'text/plain');
    expect(await namesFound(`fullText('r\u00e9sum\u00e9word')`)).toEqual(['nfd.txt']);
    expect(await namesFound(`fullText('re\u0301sume\u0301word')`)).toEqual(['nfd.txt']);
    expect(await namesFound(`fullText('cafe\u0301word') and fullText('na\u00efveword')`)).toEqual(['entities.html']);
    expect(await namesFound(`fullText('bomword')`)).toEqual(['bom.txt']);
    expect((await byText({ searchText: 'cafe\u0301word' })).body.entries.map((e: { name: string }) => e.name)).toEqual(['entities.html']);
  });

  it('finds a URL, an e-mail address and an elision whole and by their parts, and a ligature or fullwidth letters as typed', async () => {
    await indexed('links.txt', 'see http://blog.nihilogic.dk/ and write to mail@example.org about l\u2019impay\u00e9 or 인터뷰●홍인혜', 'text/plain');
    await indexed('forms.txt', 'the di\ufb00erent \uff21\uff22\uff23\uff24word', 'text/plain');
    for (const word of ['nihilogic', 'blog.nihilogic.dk', 'example', 'mail@example.org', 'impay\u00e9', '홍인혜']) expect(await namesFound(`fullText('${word}')`), word).toEqual(['links.txt']);
    expect((await byText({ searchText: 'nihilogic' })).body.entries.map((e: { name: string }) => e.name)).toEqual(['links.txt']);
    expect(await namesFound(`fullText('different') and fullText('abcdword')`)).toEqual(['forms.txt']);
  });

  it("a new version replaces the old version's text (replace resource and check-in)", async () => {
    const content = await indexed('versioned.txt', 'firstversionword');
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('secondversionword')]), 'versioned.txt');
    const replaced = await call(contentUrl(service, `/content/${content.id}/resource`), { method: 'PUT', body: form });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect((await extractionOf(replaced.body.id)).state).toBe('Done');
    expect(await namesFound(`fullText('secondversionword')`)).toEqual(['versioned.txt']);
    expect(await namesFound(`fullText('firstversionword')`)).toEqual([]);

    const checkedOut = await call(contentUrl(service, `/content/${replaced.body.id}/check-out`), { method: 'POST' });
    expect(checkedOut.status, JSON.stringify(checkedOut.body)).toBe(200);
    const checkIn = new FormData();
    checkIn.append('file', new Blob([Buffer.from('thirdversionword')]), 'versioned.txt');
    const checkedIn = await call(contentUrl(service, `/content/${checkedOut.body.id}/check-in`), { method: 'POST', body: checkIn });
    expect(checkedIn.status, JSON.stringify(checkedIn.body)).toBe(200);
    expect((await extractionOf(checkedIn.body.id)).state).toBe('Done');
    expect(await namesFound(`fullText('thirdversionword')`)).toEqual(['versioned.txt']);
    expect(await namesFound(`fullText('secondversionword')`)).toEqual([]);
  });
});

describe('extraction jobs: coalesced, durable with the upload', () => {
  it('many uploads share a few extraction jobs (at most one per window), and each content gets its text', async () => {
    const started = performance.now();
    const contents = await Promise.all(Array.from({ length: 40 }, (_, i) => newContent(service, { name: `many-${i}.txt`, bytes: `manyword${i} shared`, mimeType: 'text/plain' })));
    const elapsedMs = performance.now() - started;
    const jobs = new Set<string>();
    for (const content of contents) {
      const job = await extractionOf(content.id);
      expect(job.state, JSON.stringify(job)).toBe('Done');
      jobs.add(job.id);
    }
    expect(jobs.size).toBeLessThanOrEqual(2 + Math.ceil(elapsedMs / extractionWindowMs));
    expect(jobs.size).toBeLessThan(contents.length);
    const [record] = await sql<{ client_username: string }>(service, `select client_username from service_job where id = ?`, [[...jobs][0]]);
    expect(record!.client_username).toBe(extractionClient);
    expect(await namesFound(`fullText('manyword7')`)).toEqual(['many-7.txt']);
  });

  it('a text queued without a job (the process died after answering, before submitting one) is extracted after a worker sweeps', async () => {
    expect((await service.graphql('mutation { createRepository(input: { name: "swept", fullTextEnabled: false }) { id } }')).errors).toBeUndefined();
    const base = `${service.baseUrl}/api/v1/access.svc.content.swept/v1`;
    const content = await newContent(service, { name: 'swept.txt', bytes: 'sweptword', mimeType: 'text/plain', base });
    await sql(service, `update repository set full_text_enabled = true where name = 'swept'`);
    service.services.repositories.forget('swept');
    // what a crash right after the answer leaves: the version and its queued resource, and no job
    await sql(service, `insert into text_extraction_queue (resource_id, repository_id, queued_at) select resource_id, repository_id, now() - interval '10 seconds' from entry where id = ?`, [content.id]);
    expect(await sql(service, `select id from service_job where ? = any(content_ids)`, [content.id])).toEqual([]);
    expect((await extractionOf(content.id)).state).toBe('Done');
    expect(await byText({ searchText: 'sweptword' }, base)).toMatchObject({ status: 200, body: { count: 1, entries: [{ id: content.id }] } });
    expect(await sql(service, `select resource_id from text_extraction_queue where resource_id = (select resource_id from entry where id = ?)`, [content.id])).toEqual([]);
  });
});

describe('bounds: a hostile file cannot stall the queue or the service', () => {
  it('keeps at most FULLTEXT_MAX_TEXT_CHARS characters of a large text, reading only its head', async () => {
    const big = `${'lorem '.repeat(maxChars)} tailword`;
    const content = await indexed('big.txt', big);
    const [row] = await sql<{ length: number; truncated: boolean }>(
      service,
      `select length(t.text) as length, t.truncated from resource_text t join entry e on e.resource_id = t.resource_id where e.id = ?`,
      [content.id],
    );
    expect(row).toEqual({ length: maxChars, truncated: true });
    expect(await namesFound(`fullText('tailword')`)).toEqual([]);
  });

  it('a text cut at FULLTEXT_MAX_TEXT_CHARS inside a surrogate pair is stored without the lone half, and later uploads are indexed', async () => {
    // its last kept UTF-16 unit is the first half of U+1F4A9: Postgres refuses a lone surrogate in JSON, which
    // failed the whole batch and left it queued, so every later extraction of the repository failed on it again
    const split = await indexed('split-pair.txt', `${'a'.repeat(maxChars - 1)}\u{1F4A9} tailword`);
    const [row] = await sql<{ tail: string }>(service, `select right(t.text, 2) as tail from resource_text t join entry e on e.resource_id = t.resource_id where e.id = ?`, [split.id]);
    expect(row).toEqual({ tail: 'a ' });
    await indexed('after-split.txt', 'aftersplitword');
    expect(await namesFound(`fullText('aftersplitword')`)).toEqual(['after-split.txt']);
  });

  // 400 MB deflated here, then 200 MB inflated by the extraction process: over vitest's 30 s at load 20
  it('a DOCX zip bomb ends its job on the memory bound, and later uploads are still indexed', { timeout: 120_000 }, async () => {
    // 400 MB of text behind a few hundred KB of ZIP: the extraction process dies, not the service
    const bomb = zip({
      '[Content_Types].xml': '<Types/>',
      'word/document.xml': Buffer.concat([Buffer.from('<w:document><w:body><w:p><w:r><w:t>'), Buffer.alloc(400 * 1024 * 1024, 0x61), Buffer.from('</w:t></w:r></w:p></w:body></w:document>')]),
    });
    const content = await newContent(service, { name: 'bomb.docx', bytes: bomb });
    const job = await extractionOf(content.id);
    expect(job.state).toBe('panic');
    expect(job.reason_code, JSON.stringify(job)).toBe('extractionMemoryExceeded');
    expect(job.error_message).toMatch(/memory bound of 200 MB/);
    const health = await call(`${service.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    await indexed('after-bomb.txt', 'afterbombword');
    expect(await namesFound(`fullText('afterbombword')`)).toEqual(['after-bomb.txt']);
  });
});

describe('the extraction deadline', () => {
  it('an extraction past FULLTEXT_EXTRACT_TIMEOUT_MS ends its job (extractionTimeout), and the service goes on', { timeout: 120_000 }, async () => {
    const hurried = await startTestService({ FULLTEXT_EXTRACT_TIMEOUT_MS: '500', FULLTEXT_SWEEP_MS: '500' });
    try {
      // 5,000 pages of text: reading them takes seconds (300 took under half a second)
      const pages = Array.from({ length: 5_000 }, (_, i) => textPage(Array.from({ length: 20 }, (_, line) => `page ${i} line ${line} of a long report`)));
      const content = await newContent(hurried, { name: 'long.pdf', bytes: buildPdf(pages) });
      const job = await extractionOf(content.id, 60_000, hurried);
      expect(job.state).toBe('panic');
      expect(job.reason_code, JSON.stringify(job)).toBe('extractionTimeout');
      expect(job.error_message).toMatch(/deadline of 500 ms/);
      expect((await call(`${hurried.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await hurried.stop();
    }
  });
});

describe('a rerun after a worker died', () => {
  it('writes the whole text in one statement: a rerun replaces the row, never adds a second', async () => {
    const content = await indexed('rerun.txt', 'rerunword');
    const [{ resource_id }] = await sql<{ resource_id: string }>(service, `select resource_id from entry where id = ?`, [content.id]);
    const em = service.services.orm.em.fork();
    expect(await saveResourceTexts(em as never, [{ resourceId: resource_id, text: 'rerunword again', truncated: false, notes: [] }])).toEqual([resource_id]);
    const rows = await sql(service, `select text from resource_text where resource_id = ?`, [resource_id]);
    expect(rows).toEqual([{ text: 'rerunword again' }]);
    expect(await saveResourceTexts(em as never, [{ resourceId: 'no-such-resource', text: 'x', truncated: false, notes: [] }])).toEqual([]);
  });
});

const byText = (query: Record<string, string | number | undefined>, base?: string) => call(contentUrl(service, '/content/search/by-text', query, service.adminSession, base));

describe('GET C/content/search/by-text (spec endpoint 3) and the searchByText query', () => {
  it('answers an EntriesResponse, most relevant first, with the shared parameters', async () => {
    const once = await indexed('rank-once.txt', 'zebra lives here among many other words of little interest');
    const often = await indexed('rank-often.txt', 'zebra zebra zebra zebra');
    const found = await byText({ searchText: 'zebra' });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body).toMatchObject({ count: 2, duration: expect.any(Number) });
    expect(found.body.entries.map((e: { id: string }) => e.id)).toEqual([often.id, once.id]);
    // orderBy replaces relevance; limit and offset page; entryType filters
    const byName = await byText({ searchText: 'zebra', orderBy: 'name', orderingDirection: 'desc', limit: 1, offset: 1 });
    expect(byName.body).toMatchObject({ count: 2, entries: [{ id: often.id }] });
    expect((await byText({ searchText: 'zebra', entryType: 'FOLDER' })).body.count).toBe(0);
    // prefixes and phrases
    expect((await byText({ searchText: 'zeb*' })).body.count).toBe(2);
    expect((await byText({ searchText: '"lives here"' })).body.entries.map((e: { id: string }) => e.id)).toEqual([once.id]);
    // the same operation through the gateway
    const viaGraphql = await service.graphql<{ searchByText: { count: number; entries: { id: string }[] } }>(
      'query($t: String!) { searchByText(repository: "default", searchText: $t) { count entries { id } } }',
      { t: 'zebra' },
    );
    expect(viaGraphql.data!.searchByText).toEqual({ count: 2, entries: [{ id: often.id }, { id: once.id }] });
  });

  it('bad input is a 400 with the error body', async () => {
    expect(await byText({})).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: expect.stringContaining('searchText') } });
    expect(await byText({ searchText: '' })).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments' } });
    expect(await byText({ searchText: '   ' })).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: expect.stringContaining('must not be empty') } });
    expect(await byText({ searchText: 'x'.repeat(1001) })).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: expect.stringContaining('longer than 1000') } });
    // characters are counted, not UTF-16 units: 1,000 emoji are 2,000 units
    expect(await byText({ searchText: '😀'.repeat(1000) })).toMatchObject({ status: 200, body: { count: 0 } });
    expect(await byText({ searchText: '😀'.repeat(1001) })).toMatchObject({ status: 400, body: { message: expect.stringContaining('longer than 1000') } });
    // GraphQL refuses an empty search text as REST does
    const empty = await service.graphql('{ searchByText(repository: "default", searchText: "") { count } }');
    expect(empty.errors?.[0]).toMatchObject({ message: expect.stringContaining('must not be empty'), extensions: { reasonCode: 'illegalArguments', status: 400 } });
    expect(await byText({ searchText: 'zebra', limit: 5000 })).toMatchObject({ status: 400 });
  });
});

describe('the repository flag fullTextEnabled and POST C/reindex', () => {
  it('off: nothing is indexed and by-text is a 409; after switching it on, a reindex finds what was uploaded meanwhile', async () => {
    const created = await service.graphql('mutation { createRepository(input: { name: "notext", fullTextEnabled: false }) { id } }');
    expect(created.errors).toBeUndefined();
    const base = `${service.baseUrl}/api/v1/access.svc.content.notext/v1`;
    const content = await newContent(service, { name: 'silent.txt', bytes: 'hiddenword in the text', base });
    await sleep(500);
    expect(await sql(service, `select id from service_job where ? = any(content_ids)`, [content.id])).toEqual([]);
    expect(await byText({ searchText: 'hiddenword' }, base)).toMatchObject({ status: 409, body: { reasonCode: 'conflict', message: expect.stringContaining('full text is disabled') } });
    const refused = await call(contentUrl(service, '/reindex', {}, service.adminSession, base), { method: 'POST' });
    expect(refused).toMatchObject({ status: 409, body: { reasonCode: 'conflict' } });

    // the administration switches it on (tests set the column)
    await sql(service, `update repository set full_text_enabled = true where name = 'notext'`);
    service.services.repositories.forget('notext');
    expect(await byText({ searchText: 'hiddenword' }, base)).toMatchObject({ status: 200, body: { count: 0 } });

    const user = await service.createUserSession('reindex-user');
    const forbidden = await call(contentUrl(service, '/reindex', {}, user, base), { method: 'POST' });
    expect(forbidden).toMatchObject({ status: 403, body: { reasonCode: 'accessDenied' } });

    const started = await call(contentUrl(service, '/reindex', {}, service.adminSession, base), { method: 'POST' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toEqual({ jobId: expect.any(String) });
    const until = Date.now() + 60_000;
    let status;
    do {
      await sleep(100);
      status = await call(contentUrl(service, '/jobs/status', { jobId: started.body.jobId }, service.adminSession, base));
      expect(status.status).toBe(200);
    } while (!['Done', 'panic'].includes(status.body.state) && Date.now() < until);
    expect(status.body.state).toBe('Done');
    expect(await byText({ searchText: 'hiddenword' }, base)).toMatchObject({ status: 200, body: { count: 1, entries: [{ id: content.id }] } });
  });
});
