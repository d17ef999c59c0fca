// Redis Cluster's hash slot of a key, computed here so keys can be grouped (and, under
// REDIS_SLOT_CHECK, checked) without asking a cluster.
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let j = 0; j < 8; j++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** Redis Cluster's slot of a full key (CRC16-XMODEM mod 16384 of its hash tag, if it has one). */
export function keySlot(key: string): number {
  let part = key;
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) part = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(part, 'utf8')) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % 16384;
}
