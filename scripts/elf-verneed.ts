// A minimal ELF64 little-endian walker for one job: setting VER_FLG_WEAK on a version need
// (an entry of `.gnu.version_r`), so the dynamic loader no longer refuses a binary whose need for
// that version cannot be met. See scripts/uws-compat.ts for why.
const SHT_GNU_VERNEED = 0x6ffffffe;
export const VER_FLG_WEAK = 0x2;

export interface VersionNeed {
  /** The library the version is needed from, e.g. `libc.so.6`. */
  file: string;
  /** e.g. `GLIBC_2.38`. */
  version: string;
  flags: number;
  /** Byte offset of the Vernaux entry's `vna_flags` field. */
  flagsOffset: number;
}

/** Every (library, version) need listed in the binary's `.gnu.version_r` section. */
export function versionNeeds(elf: Buffer): VersionNeed[] {
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

  const needs: VersionNeed[] = [];
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type !== SHT_GNU_VERNEED) continue;
    const strtab = section(s.link).offset;
    // sh_info holds the number of Verneed entries (vn_version, vn_cnt, vn_file, vn_aux, vn_next);
    // each lists vn_cnt Vernaux entries (vna_hash, vna_flags, vna_other, vna_name, vna_next).
    let need = s.offset;
    for (let n = 0; n < s.info; n++) {
      const file = cString(strtab + elf.readUInt32LE(need + 4));
      const auxCount = elf.readUInt16LE(need + 2);
      let aux = need + elf.readUInt32LE(need + 8);
      for (let a = 0; a < auxCount; a++) {
        needs.push({
          file,
          version: cString(strtab + elf.readUInt32LE(aux + 8)),
          flags: elf.readUInt16LE(aux + 4),
          flagsOffset: aux + 4,
        });
        aux += elf.readUInt32LE(aux + 12);
      }
      need += elf.readUInt32LE(need + 12);
    }
  }
  return needs;
}

/**
 * Sets VER_FLG_WEAK on every need of `version` in `elf` (modified in place unless dryRun).
 * Returns whether something was (or would be) changed.
 */
export function weakenVersionNeed(elf: Buffer, version: string, opts: { dryRun?: boolean } = {}): boolean {
  const strong = versionNeeds(elf).filter((n) => n.version === version && (n.flags & VER_FLG_WEAK) === 0);
  if (!opts.dryRun) for (const n of strong) elf.writeUInt16LE(n.flags | VER_FLG_WEAK, n.flagsOffset);
  return strong.length > 0;
}
