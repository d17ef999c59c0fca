// The rendered-status cache (services/core/statuses/renderCache.ts, statusShells.ts): a rendering
// made or read from Redis while the same process drops it (an emoji copied, media processed, an
// edit) is used by that request but not kept, in Redis (the tombstone) nor in the process's own
// copies; otherwise the old rendering is served for seconds after the change.
import type { Core } from '../../../services/core/context.ts';
import { readShells, renderMisses } from '../../../services/core/entities/statusShells.ts';
import {
  invalidateRenderedStatuses,
  localRenderingsOf,
  renderedStatusKey,
} from '../../../services/core/statuses/renderCache.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

let core: Core;
let author: AccountDoc;

beforeAll(async () => {
  ({ core } = await createTestCore());
  author = (await createTestUser(core)).account as AccountDoc;
});

afterAll(async () => {
  await closeTestCore(core);
});

/** A status with no rendering cached anywhere. */
async function freshStatus(text: string): Promise<bigint> {
  const status = await postStatus(core, author, { text });
  localRenderingsOf(core.db).delete(status._id);
  await core.redis.del(renderedStatusKey(status._id));
  return status._id;
}

describe('rendered-status cache', () => {
  it('keeps a rendering nothing dropped meanwhile, here and in Redis', async () => {
    const id = await freshStatus('kept');
    const rendered = await renderMisses(core, [id], new Map());
    expect(rendered.get(id)?.s.content).toContain('kept');
    expect(localRenderingsOf(core.db).get(id)).toBe(rendered.get(id));
    expect(await core.redis.get(renderedStatusKey(id))).toContain('kept');
  });

  it('does not keep a rendering dropped while it was made', async () => {
    const id = await freshStatus('raced by a drop');
    const rendering = renderMisses(core, [id], new Map());
    await invalidateRenderedStatuses(core, [id]);
    // The request that rendered it still answers with it.
    expect((await rendering).get(id)?.s.content).toContain('raced by a drop');
    expect(localRenderingsOf(core.db).get(id)).toBeUndefined();
    expect(await core.redis.get(renderedStatusKey(id))).toBe('');
    expect((await readShells(core, [id])).has(id)).toBe(false);
  });

  it('does not keep a rendering read from Redis while it was dropped', async () => {
    const id = await freshStatus('read while dropped');
    await renderMisses(core, [id], new Map());
    localRenderingsOf(core.db).delete(id);
    const reading = readShells(core, [id]);
    await invalidateRenderedStatuses(core, [id]);
    expect((await reading).get(id)?.s.content).toContain('read while dropped');
    expect(localRenderingsOf(core.db).get(id)).toBeUndefined();
    expect((await readShells(core, [id])).has(id)).toBe(false);
  });
});
