// The ELF walker of the uWebSockets.js compatibility step (scripts/uws-compat.ts), on the real
// binary: it finds the GLIBC_2.38 need and sets only its weak flag, once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VER_FLG_WEAK, versionNeeds, weakenVersionNeed } from '../../../scripts/elf-verneed.ts';

const binary = join(process.cwd(), 'node_modules/uWebSockets.js/uws_linux_x64_137.node');

// The package ships this binary for linux x64 only (other platforms have their own).
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64' ? describe : describe.skip;

onLinuxX64('weakenVersionNeed', () => {
  it('marks only the GLIBC_2.38 need weak, idempotently', () => {
    const elf = readFileSync(binary);
    const needs = versionNeeds(elf);
    const target = needs.find((n) => n.version === 'GLIBC_2.38');
    expect(target?.file).toBe('libc.so.6');
    // Start from the pristine state (the installed copy may have been patched already).
    elf.writeUInt16LE(target!.flags & ~VER_FLG_WEAK, target!.flagsOffset);
    const before = versionNeeds(elf);

    expect(weakenVersionNeed(elf, 'GLIBC_2.38', { dryRun: true })).toBe(true);
    expect(versionNeeds(elf)).toEqual(before);
    expect(weakenVersionNeed(elf, 'GLIBC_2.38')).toBe(true);
    expect(weakenVersionNeed(elf, 'GLIBC_2.38')).toBe(false);

    const after = versionNeeds(elf);
    after.forEach((n, i) => {
      const expected = n.version === 'GLIBC_2.38' ? before[i].flags | VER_FLG_WEAK : before[i].flags;
      expect(n.flags).toBe(expected);
    });
  });

  it('refuses what is not an ELF file', () => {
    expect(() => versionNeeds(Buffer.from('#!/bin/sh\n'))).toThrow('not an ELF file');
  });
});
