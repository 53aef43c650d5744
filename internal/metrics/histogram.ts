// A histogram whose label sets are bound once. prom-client's observe() checks and
// hashes the labels on every call (about half a microsecond), which a path that
// observes dozens of times a request pays for: the admission chain observes once
// per plugin. A Registry serves it in the very text of prom-client's Histogram.
import type { Metric, Registry } from 'prom-client';

export interface BoundSeries {
  observe(seconds: number): void;
}

class Series implements BoundSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly labels: Record<string, string>, private readonly bounds: number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    const i = this.bounds.findIndex((bound) => value <= bound);
    if (i >= 0) this.counts[i]++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = this.count = 0;
  }
}

export class BoundHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(readonly name: string, readonly help: string, private readonly labelNames: readonly L[],
    private readonly bounds: number[], registry: Registry) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of one label set, made on first use; callers keep it (or look it up again cheaply). */
  labels(values: Record<L, string>): BoundSeries {
    const key = this.labelNames.map((n) => values[n]).join('\0');
    let series = this.series.get(key);
    if (!series) this.series.set(key, series = new Series({ ...values }, this.bounds));
    return series;
  }

  /** What prom-client's Registry writes as text: cumulative buckets, +Inf, sum and count of each label set, the
   * series' labels shared by its lines, as its Histogram answers. */
  getForPromString() {
    const values = [...this.series.values()].flatMap((s) => {
      let acc = 0;
      const buckets = this.bounds.map((le, i) => ({ labels: { le } as Record<string, string | number>, value: acc += s.counts[i], metricName: `${this.name}_bucket`, sharedLabels: s.labels }));
      return [...buckets,
        { labels: { le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket`, sharedLabels: s.labels },
        { labels: {}, value: s.sum, metricName: `${this.name}_sum`, sharedLabels: s.labels },
        { labels: {}, value: s.count, metricName: `${this.name}_count`, sharedLabels: s.labels }];
    });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same with each line's labels whole (JSON output and readers of single metrics), as its Histogram answers. */
  get() {
    const text = this.getForPromString();
    return { ...text, values: text.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
  }

  /** Zeroes every series; the bound ones stay valid. */
  reset(): void {
    for (const s of this.series.values()) s.reset();
  }
}
