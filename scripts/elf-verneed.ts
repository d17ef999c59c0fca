// A minimal ELF64 little-endian walker for one job: setting VER_FLG_WEAK on a version need
// (an entry of `.gnu.version_r`), so the dynamic loader no longer refuses a binary whose need for
// that version cannot be met. See scripts/uws-compat.ts for why.
const SHT_GNU_VERNEED = 0x6ffffffe;
const VER_FLG_WEAK = 0x2;

/**
 * Sets VER_FLG_WEAK on every need of `version` in `elf` (modified in place).
 * Returns whether something was (or, with dryRun, would be) changed.
 */
export function weakenVersionNeed(elf: Buffer, version: string, opts: { dryRun?: boolean } = {}): boolean {
  if (elf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (elf[4] !== 2 || elf[5] !== 1) throw new Error('only 64-bit little-endian ELF is supported');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const section = (i: number) => {
    const at = shoff + i * shentsize;
    return {
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      link: elf.readUInt32LE(at + 0x28),
      info: elf.readUInt32LE(at + 0x2c),
    };
  };
  const cString = (at: number) => elf.toString('latin1', at, elf.indexOf(0, at));

  let changed = false;
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type !== SHT_GNU_VERNEED) continue;
    const strtab = section(s.link).offset;
    // sh_info holds the number of Verneed entries; each lists its Vernaux entries.
    let need = s.offset;
    for (let n = 0; n < s.info; n++) {
      const auxCount = elf.readUInt16LE(need + 2);
      let aux = need + elf.readUInt32LE(need + 8);
      for (let a = 0; a < auxCount; a++) {
        const flags = elf.readUInt16LE(aux + 4);
        if (cString(strtab + elf.readUInt32LE(aux + 8)) === version && (flags & VER_FLG_WEAK) === 0) {
          if (!opts.dryRun) elf.writeUInt16LE(flags | VER_FLG_WEAK, aux + 4);
          changed = true;
        }
        aux += elf.readUInt32LE(aux + 12);
      }
      need += elf.readUInt32LE(need + 12);
    }
  }
  return changed;
}
