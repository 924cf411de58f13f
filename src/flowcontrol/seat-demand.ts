import { performance } from 'node:perf_hooks';

/** What an integration period saw (kube's IntegratorResults). */
export interface IntegratorResults {
  /** Seconds integrated. */
  duration: number;
  /** Time-weighted average (NaN over no time). */
  average: number;
  /** Time-weighted standard deviation (NaN over no time). */
  deviation: number;
  min: number;
  max: number;
}

/**
 * kube's fairqueuing Integrator: the time integral of a piecewise-constant value (a level's seat
 * demand: seats in use plus seats waiting), its square, minimum and maximum since the last reset.
 */
export class SeatDemandIntegrator {
  private value = 0;
  private last = performance.now();
  private elapsed = 0;
  private integral = 0;
  private integralSquares = 0;
  private min = 0;
  private max = 0;

  private update(): void {
    const now = performance.now();
    const dt = (now - this.last) / 1000;
    this.last = now;
    if (dt <= 0) return;
    this.elapsed += dt;
    this.integral += this.value * dt;
    this.integralSquares += this.value * this.value * dt;
  }

  set(value: number): void {
    if (value === this.value) return;
    this.update();
    this.value = value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** The period's results; the next period starts now, at the current value. */
  reset(): IntegratorResults {
    this.update();
    const average = this.elapsed > 0 ? this.integral / this.elapsed : NaN;
    const variance = this.elapsed > 0 ? this.integralSquares / this.elapsed - average * average : NaN;
    const results = { duration: this.elapsed, average, deviation: variance >= 0 ? Math.sqrt(variance) : NaN, min: this.min, max: this.max };
    this.elapsed = 0;
    this.integral = 0;
    this.integralSquares = 0;
    this.min = this.value;
    this.max = this.value;
    return results;
  }
}

/** kube's seatDemandSmoothingCoefficient. */
const SMOOTHING = 0.977;

/** A level's seat demand statistics over the last adjustment period, smoothed as kube smooths them. */
export class SeatDemandStats {
  average = 0;
  stdDev = 0;
  highWatermark = 0;
  smoothed = 0;

  update(obs: IntegratorResults): void {
    this.highWatermark = Math.round(obs.max);
    if (obs.duration <= 0) return;
    const deviation = Number.isNaN(obs.deviation) ? 0 : obs.deviation;
    this.average = obs.average;
    this.stdDev = deviation;
    const envelope = obs.average + deviation;
    this.smoothed = Math.max(envelope, SMOOTHING * this.smoothed + (1 - SMOOTHING) * envelope);
  }
}
