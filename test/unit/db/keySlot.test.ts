// The hash slot of a key as Redis Cluster computes it (CRC16-XMODEM of the key or of its hash tag,
// mod 16384); the expected values are what `CLUSTER KEYSLOT` answers on Redis 7.
import { keySlot } from '../../../services/core/db/redisSlots.ts';

test.each([
  ['foo', 12182],
  ['123456789', 12739],
  ['{user1000}.following', 3443],
  ['foo{}{bar}', 8363], // an empty tag: the whole key
  ['foo{{bar}}zap', 4015], // the tag is "{bar"
  ['foo{bar}{zap}', 5061], // the first tag only
  ['é', 10180], // UTF-8 bytes
])('%s is in slot %d', (key, slot) => {
  expect(keySlot(key)).toBe(slot);
});

test('a key and the keys derived from it share the slot of their tag', () => {
  expect(keySlot('ns:feed:home:{42}')).toBe(keySlot('42'));
  expect(keySlot('ns:feed:home:{42}:reblogs')).toBe(keySlot('ns:feed:active:{42}'));
});
