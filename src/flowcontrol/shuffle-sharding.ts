import { createHash } from 'node:crypto';

/**
 * kube's hashFlowID: the first 8 bytes (little-endian) of SHA-256 over the FlowSchema name, a zero
 * byte and the flow distinguisher. Equal inputs give equal hashes in every process, so a flow is
 * dealt the same queues everywhere.
 */
export function flowHash(flowSchema: string, distinguisher: string): bigint {
  const digest = createHash('sha256').update(flowSchema).update(Buffer.of(0)).update(distinguisher).digest();
  return digest.readBigUInt64LE(0);
}

/**
 * kube's shufflesharding Dealer: deals `handSize` distinct queue indexes out of `deckSize` from
 * `hash`, by the same arithmetic (so a flow lands on the queues kube would give it). The caller
 * checked the sizes (see shuffleShardingProblem).
 */
export function dealHand(hash: bigint, deckSize: number, handSize: number): number[] {
  const remainders: number[] = [];
  let rest = hash;
  for (let i = 0; i < handSize; i++) {
    const divisor = BigInt(deckSize - i);
    const next = rest / divisor;
    remainders.push(Number(rest - divisor * next));
    rest = next;
  }
  const hand: number[] = [];
  for (let i = 0; i < handSize; i++) {
    let card = remainders[i];
    for (let j = i; j > 0; j--) if (card >= remainders[j - 1]) card++;
    hand.push(card);
  }
  return hand;
}
