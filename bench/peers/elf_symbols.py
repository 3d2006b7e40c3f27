#!/usr/bin/python3
"""Print `NAME FILE_OFFSET` (hex) for the defined function symbols of an ELF file.

The kernel's uprobe_events wants a file offset, not a virtual address: this maps each
symbol's address through the PT_LOAD segment that holds it. .symtab is used when present,
else .dynsym (stripped objects such as Debian's libc.so.6). Aliases (several names at one
address) are all printed unless --unique-addresses is given. Standard library only.
"""
import argparse
import fnmatch
import struct
import sys

STT_FUNC, STT_GNU_IFUNC, SHN_UNDEF, PT_LOAD = 2, 10, 0, 1
SHT_SYMTAB, SHT_DYNSYM = 2, 11


def read_functions(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{path}: not a little-endian ELF64 file")
    (e_phoff, e_shoff) = struct.unpack_from("<QQ", data, 0x20)
    (e_phentsize, e_phnum, e_shentsize, e_shnum) = struct.unpack_from("<HHHH", data, 0x36)
    loads = []
    for i in range(e_phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, e_phoff + i * e_phentsize)
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_filesz, p_offset))
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
                for i in range(e_shnum)]
    by_type = {s[1]: s for s in sections if s[1] in (SHT_SYMTAB, SHT_DYNSYM)}
    table = by_type.get(SHT_SYMTAB) or by_type.get(SHT_DYNSYM)
    if table is None:
        sys.exit(f"{path}: no symbol table")
    _n, _t, _fl, _a, sym_off, sym_size, link, _i, _al, entsize = table
    strtab = sections[link]
    str_off = strtab[4]
    functions = []
    for i in range(sym_size // entsize):
        st_name, st_info, _other, st_shndx, st_value, st_size = struct.unpack_from(
            "<IBBHQQ", data, sym_off + i * entsize)
        if (st_info & 0xF) not in (STT_FUNC, STT_GNU_IFUNC) or st_shndx == SHN_UNDEF or st_value == 0:
            continue
        end = data.index(b"\0", str_off + st_name)
        name = data[str_off + st_name:end].decode(errors="replace")
        for vaddr, filesz, offset in loads:
            if vaddr <= st_value < vaddr + filesz:
                functions.append((name, st_value - vaddr + offset))
                break
    return functions


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("elf")
    parser.add_argument("pattern", nargs="?", default="*", help="glob on the symbol name")
    parser.add_argument("--unique-addresses", action="store_true")
    args = parser.parse_args()
    seen = set()
    for name, offset in read_functions(args.elf):
        if not fnmatch.fnmatchcase(name, args.pattern):
            continue
        if args.unique_addresses:
            if offset in seen:
                continue
            seen.add(offset)
        print(f"{name} 0x{offset:x}")


if __name__ == "__main__":
    main()
