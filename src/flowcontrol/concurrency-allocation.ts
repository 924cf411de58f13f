/** One priority level in the seat allocation problem: its target and bounds (seats). */
export interface AllocationItem {
  target: number;
  lowerBound: number;
  upperBound: number;
}

/** The allocation and the fair proportion that produced it. */
export interface Allocation {
  allocs: number[];
  fairFrac: number;
}

/** kube's MinTarget: a target below this counts as this, so that a proportion of it exists. */
const MIN_TARGET = 0.001;
const EPSILON = 0.0000001;

/**
 * kube's computeConcurrencyAllocation: splits `requiredSum` seats among the items so that each gets
 * the same proportion (`fairFrac`) of its target, clamped to its bounds, and the allocations add up
 * to `requiredSum`. Throws (as kube returns an error) when the bounds make that impossible.
 */
export function computeConcurrencyAllocation(requiredSum: number, items: readonly AllocationItem[]): Allocation {
  if (requiredSum < 0) throw new Error('negative sums are not supported');
  let lowSum = 0;
  let highSum = 0;
  let targetSum = 0;
  let ubMin = Number.MAX_VALUE;
  let ubMax = -Number.MAX_VALUE;
  let lbMin = Number.MAX_VALUE;
  let lbMax = -Number.MAX_VALUE;
  const relative = items.map((item, idx) => {
    if (item.lowerBound < 0) throw new Error(`lower bound ${idx} is ${item.lowerBound} but negative lower bounds are not allowed`);
    if (item.target < item.lowerBound) throw new Error(`target ${idx} is ${item.target}, which is below its lower bound of ${item.lowerBound}`);
    if (item.upperBound < item.lowerBound)
      throw new Error(`upper bound ${idx} is ${item.upperBound} but should not be less than the lower bound ${item.lowerBound}`);
    const target = Math.max(item.target, MIN_TARGET);
    lowSum += item.lowerBound;
    highSum += item.upperBound;
    targetSum += target;
    const lower = item.lowerBound / target;
    const upper = item.upperBound / target;
    ubMin = Math.min(ubMin, upper);
    ubMax = Math.max(ubMax, upper);
    lbMin = Math.min(lbMin, lower);
    lbMax = Math.max(lbMax, lower);
    return { target, lower, upper };
  });
  if (lbMax > 1) throw new Error(`lbRange.max-1=${lbMax - 1}, which is impossible because lbRange.max can not be greater than 1`);
  if (lowSum - requiredSum > EPSILON) throw new Error(`lower bounds sum to ${lowSum}, which is higher than the required sum of ${requiredSum}`);
  if (requiredSum - highSum > EPSILON) throw new Error(`upper bounds sum to ${highSum}, which is lower than the required sum of ${requiredSum}`);
  if (requiredSum === 0) return { allocs: items.map(() => 0), fairFrac: 0 };
  if (lowSum - requiredSum > -EPSILON) return { allocs: items.map((i) => i.lowerBound), fairFrac: lbMin };
  if (requiredSum - highSum > -EPSILON) return { allocs: items.map((i) => i.upperBound), fairFrac: ubMax };
  let fairProp = requiredSum / targetSum;
  if (lbMax <= fairProp && fairProp <= ubMin) return { allocs: relative.map((r) => r.target * fairProp), fairFrac: fairProp };
  // Walk the bounds (as proportions of target) in ascending order; between two consecutive bounds
  // the sum grows linearly with the proportion, at the rate of the targets of the classes whose
  // allocation is not clamped there.
  const bounds: Array<{ value: number; item: number; lower: boolean }> = [];
  relative.forEach((r, item) => bounds.push({ value: r.lower, item, lower: true }, { value: r.upper, item, lower: false }));
  bounds.sort((a, b) => a.value - b.value);
  let sumSoFar = lowSum;
  fairProp = lbMin;
  let sensitiveTargetSum = 0;
  let deltaSensitiveTargetSum = 0;
  let numSensitive = 0;
  let deltaSensitive = 0;
  let next = 0;
  while (sumSoFar < requiredSum) {
    let nextBound: number;
    for (;;) {
      sensitiveTargetSum += deltaSensitiveTargetSum;
      numSensitive += deltaSensitive;
      if (next >= bounds.length) throw new Error('impossible: ran out of bounds to consider in bound-constrained problem');
      const b = bounds[next++];
      nextBound = b.value;
      deltaSensitive = b.lower ? 1 : -1;
      deltaSensitiveTargetSum = b.lower ? relative[b.item].target : -relative[b.item].target;
      if (nextBound > fairProp) break;
    }
    if (numSensitive === 0) {
      fairProp = nextBound;
      continue;
    }
    const nextProp = fairProp + (requiredSum - sumSoFar) / sensitiveTargetSum;
    if (nextProp <= nextBound) {
      fairProp = nextProp;
      break;
    }
    sumSoFar += (nextBound - fairProp) * sensitiveTargetSum;
    fairProp = nextBound;
  }
  return { allocs: items.map((item, idx) => Math.max(item.lowerBound, Math.min(item.upperBound, fairProp * relative[idx].target))), fairFrac: fairProp };
}
