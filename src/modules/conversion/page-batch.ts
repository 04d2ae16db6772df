import type { RenderedPage } from './page-renderer.js';

/**
 * The pages of a job gathered into fewer stores: a page waits at most `intervalMs` (from the first page
 * waiting) and is stored with the pages that came meanwhile, in one transaction with the percentage of
 * the last (one commit, one statement and its triggers, one NOTIFY for several pages). Nothing is
 * reported before it is stored: the percentage commits with the rows, after the files are placed.
 * `intervalMs` 0 stores each page as it comes.
 *
 * Stores run one after the other. A store that fails fails the next `add` and `end`; `abandon` (the
 * render failed or was cancelled) drops the waiting pages and waits for a store under way, so that
 * nothing of the job is stored after its run ended.
 */
export class PageBatch {
  private waiting: RenderedPage[] = [];
  private percentage = 0;
  private timer: NodeJS.Timeout | undefined;
  private stores: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly store: (pages: RenderedPage[], percentage: number) => Promise<void>,
  ) {}

  /** A page drawn, and the job's percentage once it is stored. */
  async add(page: RenderedPage, percentage: number): Promise<void> {
    this.rethrow();
    this.waiting.push(page);
    this.percentage = percentage;
    if (this.intervalMs === 0) return this.end();
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** Stores the pages waiting; answers once every page added is stored (or throws what failed). */
  async end(): Promise<void> {
    await this.flush();
    this.rethrow();
  }

  /** Drops the pages waiting (their files stay where the render left them) and waits for a store under way. */
  async abandon(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting = [];
    await this.stores;
  }

  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const pages = this.waiting;
    const percentage = this.percentage;
    this.waiting = [];
    if (pages.length > 0) {
      this.stores = this.stores.then(async () => {
        if (this.failure) return;
        try {
          await this.store(pages, percentage);
        } catch (error) {
          this.failure = { error };
        }
      });
    }
    return this.stores;
  }

  private rethrow() {
    if (this.failure) throw this.failure.error;
  }
}
