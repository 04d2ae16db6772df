import { useEffect, useState } from 'preact/hooks';
import { gql, imageUrl } from './api.js';

/** An image from a transfer endpoint: fetched with the session, shown from an object URL, revoked when it goes. */
export function SessionImage({ url, alt, class: className }: { url: string; alt: string; class?: string }) {
  const [source, setSource] = useState<string>();
  useEffect(() => {
    let made: string | undefined;
    let gone = false;
    imageUrl(url)
      .then((objectUrl) => {
        if (gone) URL.revokeObjectURL(objectUrl);
        else setSource((made = objectUrl));
      })
      .catch(() => setSource(undefined));
    return () => {
      gone = true;
      if (made) URL.revokeObjectURL(made);
    };
  }, [url]);
  return source ? <img src={source} alt={alt} class={className} /> : null;
}

interface PageImage {
  id: string;
  page: number;
  pageCount: number;
  format: string;
  status: string;
  downloadUrl: string;
}

/** The page images of a content version (its conversions' representations), one at a time: previous/next, or the arrow keys. */
export function PageViewer({ repository, contentId, name }: { repository: string; contentId: string; name: string }) {
  const [pages, setPages] = useState<PageImage[]>();
  const [error, setError] = useState<string>();
  const [at, setAt] = useState(0);
  const [format, setFormat] = useState<string>();
  useEffect(() => {
    gql<{ representations: { entries: PageImage[] } }>(
      'query Pages($repository: String!, $contentId: ID!) { representations(repository: $repository, contentId: $contentId) { entries { id page pageCount format status downloadUrl } } }',
      { repository, contentId },
    )
      // the preview job's thumbnail is listed too (format "thumbnail"): the console shows it beside the name instead
      .then(({ representations }) => setPages(representations.entries.filter((each) => each.format !== 'thumbnail')))
      .catch((failure: Error) => setError(failure.message));
  }, [repository, contentId]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!pages) return <p class="meta">Loading…</p>;
  if (pages.length === 0) return <p class="meta">No page images yet: convert it to images first (Actions).</p>;
  // each conversion to another format drew the pages again: one format is shown at a time
  const formats = [...new Set(pages.map((each) => each.format))];
  const chosen = format && formats.includes(format) ? format : formats[0]!;
  const ofFormat = pages.filter((each) => each.format === chosen);
  const shown = ofFormat[Math.min(at, ofFormat.length - 1)]!;
  const go = (step: number) => setAt((index) => Math.max(0, Math.min(ofFormat.length - 1, index + step)));
  return (
    <div
      class="pages"
      tabIndex={0}
      role="group"
      aria-label={`Pages of ${name} (arrow keys turn the page)`}
      onKeyDown={(event) => {
        // the format choice keeps its own arrow keys
        if ((event.key === 'ArrowLeft' || event.key === 'ArrowRight') && !(event.target instanceof HTMLSelectElement)) {
          event.preventDefault();
          go(event.key === 'ArrowLeft' ? -1 : 1);
        }
      }}
    >
      <div class="row">
        <label>
          Format
          <select
            value={chosen}
            onChange={(event) => {
              setFormat(event.currentTarget.value);
              setAt(0);
            }}
          >
            {formats.map((each) => (
              <option value={each}>{each}</option>
            ))}
          </select>
        </label>
        <button type="button" disabled={at === 0} onClick={() => go(-1)}>
          Page back
        </button>
        <span role="status">
          Page {shown.page} of {shown.pageCount} ({shown.format}
          {shown.status === 'READY' ? '' : `, ${shown.status.toLowerCase()}`})
        </span>
        <button type="button" disabled={at >= ofFormat.length - 1} onClick={() => go(1)}>
          Page forward
        </button>
      </div>
      <SessionImage url={shown.downloadUrl} alt={`${name}, page ${shown.page}`} class="page-image" />
    </div>
  );
}
