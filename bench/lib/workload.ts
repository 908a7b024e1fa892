/**
 * What a workload is and what it reports. A workload is one file in bench/workloads/ whose
 * default export is a `Workload`; bench/run.ts runs each in its own process, so the peak memory
 * of one never counts against another.
 */

interface Ceiling {
  /** What the figure is compared with, e.g. "raw better-sqlite3 inserts, 100 rows/transaction". */
  name: string;
  value: number;
}

interface Target {
  text: string;
  met: boolean;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** Shown beside the value: latencies, counts, sizes. */
  detail?: string;
  /** The ceiling measured in the same run; the report adds value / ceiling. */
  ceiling?: Ceiling;
  target?: Target;
}

export interface WorkloadResult {
  figures: Figure[];
  /** Free text: set-up, what a figure means, anything surprising. */
  notes: string[];
}

export interface Workload {
  title: string;
  run(): Promise<WorkloadResult>;
}

/** What the child process sends back to bench/run.ts. */
export interface ChildReport {
  title: string;
  result: WorkloadResult;
  /** Peak resident memory of the benchmark process itself (not of any server it started). */
  maxRssMb: number;
}

/** Sent by the child while it makes a cached history, whose time the workload's bound does not count. */
export interface HistoryMaking {
  making: boolean;
}
