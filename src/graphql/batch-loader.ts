/** Collects the keys asked for in one tick and loads them with one call (per request: no N+1 on lists). */
export class BatchLoader<K, V> {
  private pending: { key: K; resolve: (v: V | undefined) => void; reject: (e: unknown) => void }[] = [];

  constructor(private readonly loadMany: (keys: readonly K[]) => Promise<Map<K, V>>) {}

  load(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) queueMicrotask(() => void this.dispatch());
      this.pending.push({ key, resolve, reject });
    });
  }

  private async dispatch(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      const values = await this.loadMany(batch.map((item) => item.key));
      for (const item of batch) item.resolve(values.get(item.key));
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }
}
