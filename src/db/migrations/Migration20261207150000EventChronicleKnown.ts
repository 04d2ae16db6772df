import { Migration } from '@mikro-orm/migrations';
import { eventTallyFunction } from './Migration20261128150000EventTallies.js';

/**
 * An event's tally trigger looks the ACL of its chronicle up only when the chronicle has no row yet:
 * it looked it up for every event (a SQL function planned at each call, ≈ 0.6 ms), and then found the
 * row there (docs/benchmarks.md, "conversion — a job's statements prepared").
 */
export class Migration20261207150000EventChronicleKnown extends Migration {
  override up(): void {
    this.addSql(eventTallyFunction('insert', { replace: true }));
  }
}
