import { slowBursts, type Pause } from '../../bench/lib.ts';

const post = (startMs: number, ms: number) => ({ startMs, endMs: startMs + ms });
const pause = (atMs: number, ms: number, kind: string): Pause => ({ atMs, ms, kind });

describe('slowBursts (the api benchmark: what the slow posts waited through)', () => {
  it('groups slow requests in flight together and puts each group down to its longest pause', () => {
    const requests = [
      post(0, 40), // fast: not counted
      post(1000, 150),
      post(1010, 140),
      post(1020, 120), // one burst: 1000-1150
      post(5000, 130),
      post(5050, 110), // another: 5000-5160
      post(9000, 105), // a third, with no pause inside
    ];
    const result = slowBursts(requests, 100, {
      API: [pause(1100, 18, 'mark-compact'), pause(5100, 3, 'scavenge')],
      'MongoDB-wire': [pause(1050, 9, 'Young'), pause(5020, 74, 'Full')],
      Kafka: [pause(7000, 90, 'Full')], // between bursts: no burst's
    });
    expect(result.slow).toBe(6);
    expect(result.bursts).toBe(3);
    expect(Object.fromEntries(result.byCause)).toEqual({
      'API mark-compact': { bursts: 1, requests: 3 },
      'MongoDB-wire Full': { bursts: 1, requests: 2 },
      none: { bursts: 1, requests: 1 },
    });
  });

  it('counts a pause that began before a burst and lasted into it, and ignores pauses under the minimum', () => {
    const result = slowBursts([post(2000, 200)], 100, {
      Kafka: [pause(1950, 80, 'Full')],
      API: [pause(2100, 4, 'scavenge')],
    });
    expect(Object.fromEntries(result.byCause)).toEqual({ 'Kafka Full': { bursts: 1, requests: 1 } });
    expect(slowBursts([post(2000, 200)], 100, { API: [pause(2100, 4, 'scavenge')] }).byCause.get('none')).toEqual({
      bursts: 1,
      requests: 1,
    });
  });

  it('says how often a window as long as a burst holds a pause anyway', () => {
    // One 150 ms burst in a 10 s span with one 60 ms pause: 1 of the 50 windows holds it.
    const requests = [post(0, 10), post(5000, 150), post(9990, 10)];
    const result = slowBursts(requests, 100, { API: [pause(2000, 60, 'mark-compact')] });
    expect(result.byChance).toBeCloseTo(1 / 50);
    expect(slowBursts(requests, 100, { API: [] }).byChance).toBe(0);
  });

  it('finds nothing when no request is slower than the threshold', () => {
    const result = slowBursts([post(0, 99), post(10, 100)], 100, { API: [pause(50, 30, 'mark-compact')] });
    expect(result).toEqual({ slow: 0, bursts: 0, byCause: new Map(), byChance: 0 });
  });
});
