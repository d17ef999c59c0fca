import { Coalescer, sharedRead } from '../../../services/core/events/coalesce.ts';

/** A send whose calls stay open until the test lets them finish. */
function gatedSend() {
  const sent: number[][] = [];
  const gates: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const send = (items: number[]) => {
    sent.push(items);
    return new Promise<void>((resolve, reject) => gates.push({ resolve, reject }));
  };
  return { sent, gates, send };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Coalescer', () => {
  it('sends a lone call at once, and what arrives meanwhile together in the next send', async () => {
    const { sent, gates, send } = gatedSend();
    const c = new Coalescer(send);
    const first = c.add([1]);
    expect(sent).toEqual([[1]]);
    const later = [c.add([2]), c.add([3, 4]), c.add([5])];
    await tick();
    expect(sent).toHaveLength(1); // one send in flight at a time
    gates[0]!.resolve();
    await first;
    await tick();
    expect(sent).toEqual([[1], [2, 3, 4, 5]]);
    gates[1]!.resolve();
    await Promise.all(later);
  });

  it('fails only the callers whose items were in the failed send', async () => {
    const { sent, gates, send } = gatedSend();
    const c = new Coalescer(send);
    const first = c.add([1]);
    const second = c.add([2]);
    gates[0]!.reject(new Error('broker down'));
    await expect(first).rejects.toThrow('broker down');
    await tick();
    expect(sent).toEqual([[1], [2]]);
    gates[1]!.resolve();
    await expect(second).resolves.toBeUndefined();
  });

  it('caps a send at maxItems (a call is never split)', async () => {
    const { sent, gates, send } = gatedSend();
    const c = new Coalescer(send, { maxItems: 3 });
    const all = [c.add([0]), c.add([1, 2]), c.add([3]), c.add([4, 5, 6, 7])];
    gates[0]!.resolve();
    await tick();
    gates[1]!.resolve();
    await tick();
    gates[2]!.resolve();
    await Promise.all(all);
    expect(sent).toEqual([[0], [1, 2, 3], [4, 5, 6, 7]]);
  });

  it('lingers before each send when asked: calls within the wait leave together', async () => {
    const { sent, gates, send } = gatedSend();
    const c = new Coalescer(send, { lingerMs: 200 });
    const first = [c.add([1]), c.add([2])];
    await tick();
    expect(sent).toEqual([]); // waiting for more
    const third = c.add([3]);
    await new Promise((r) => setTimeout(r, 400));
    expect(sent).toEqual([[1, 2, 3]]);
    const fourth = c.add([4]);
    gates[0]!.resolve();
    await Promise.all([...first, third]);
    await tick();
    expect(sent).toHaveLength(1); // the next send lingers too
    await new Promise((r) => setTimeout(r, 400));
    expect(sent).toEqual([[1, 2, 3], [4]]);
    gates[1]!.resolve();
    await fourth;
  });

  it('with sameTurn, sends what callers started in the same turn together', async () => {
    const { sent, gates, send } = gatedSend();
    const c = new Coalescer(send, { sameTurn: true });
    const together = [c.add([1]), Promise.resolve().then(() => c.add([2])), c.add([3])];
    expect(sent).toEqual([]); // waits for the rest of the turn
    await tick();
    expect(sent).toEqual([[1, 3, 2]]);
    gates[0]!.resolve();
    await Promise.all(together);
    const next = c.add([4]);
    await tick();
    expect(sent).toEqual([[1, 3, 2], [4]]);
    gates[1]!.resolve();
    await next;
  });
});

describe('sharedRead', () => {
  it('reads the keys of callers that arrive together once, and gives each the answer', async () => {
    const reads: number[][] = [];
    const read = sharedRead(async (keys: number[]) => {
      reads.push(keys);
      return new Map(keys.map((k) => [k, k * 10]));
    });
    const [a, b, none] = await Promise.all([read([1, 2]), read([2, 3]), read([])]);
    expect(reads).toEqual([[1, 2, 3]]);
    expect(a.get(1)).toBe(10);
    expect(b.get(3)).toBe(30);
    expect(none.size).toBe(0);
  });

  it('fails the callers of a failed read, and reads again for the next', async () => {
    let fail = true;
    const read = sharedRead(async (keys: number[]) => {
      if (fail) throw new Error('down');
      return new Map(keys.map((k) => [k, k]));
    });
    await expect(Promise.all([read([1]), read([2])])).rejects.toThrow('down');
    fail = false;
    await expect(read([5])).resolves.toEqual(new Map([[5, 5]]));
  });
});
