/**
 * autocannon 9 ships no types: the part of its programmatic API the benchmarks use, typed here
 * (loaded with require, so no ambient module declaration leaks into the rest of the project).
 */
import { createRequire } from 'node:module';

export interface Histogram {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface AutocannonOptions {
  url: string;
  connections?: number;
  /** seconds */
  duration?: number;
  amount?: number;
  pipelining?: number;
  timeout?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** a request whose body this does not accept is counted in `mismatches` */
  verifyBody?: (body: string) => boolean;
}

export interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  throughput: Histogram;
  /** seconds */
  duration: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  non2xx: number;
  '2xx': number;
}

export const autocannon = createRequire(import.meta.url)('autocannon') as (options: AutocannonOptions) => Promise<AutocannonResult>;
