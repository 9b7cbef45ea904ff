import Glibc

/// The running pushctl executable's own image in memory.
enum ExecutableImage {
    /// Gives the pages of the executable's relocation table (`.rela.dyn`) back to the kernel.
    ///
    /// The dynamic loader reads the table once, before `main`, to relocate the image (pushctl is position
    /// independent: ~137,000 relative relocations, 3.2 MB). Nothing reads it again — lazily bound calls use the
    /// separate `.rela.plt`, and libraries loaded later carry their own — yet its pages stay mapped and count in
    /// every pushctl process's resident memory for its whole life. `MADV_DONTNEED` unmaps the whole pages inside
    /// the table (clean, read-only file pages: a later read would fault them back in from the file). Does
    /// nothing when the table cannot be found.
    static func releaseRelocationTable() {
        guard let table = relocationTable() else { return }
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let start = (table.start + page - 1) / page * page
        let end = (table.start + table.size) / page * page
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(address, Int(end - start), MADV_DONTNEED)
    }

    /// Where the executable's `DT_RELA` table lies in memory, from its dynamic section. The program headers come
    /// from the kernel's auxiliary vector (`getauxval`, looked up at run time: Swift's Glibc module does not
    /// export it).
    private static func relocationTable() -> (start: UInt, size: UInt)? {
        typealias GetAuxval = @convention(c) (UInt) -> UInt
        let atPhdr: UInt = 3, atPhnum: UInt = 5  // AT_PHDR, AT_PHNUM (<elf.h>)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getauxval") else { return nil }  // RTLD_DEFAULT
        let getauxval = unsafeBitCast(symbol, to: GetAuxval.self)
        let count = Int(getauxval(atPhnum))
        guard count > 0, let headers = UnsafePointer<Elf64_Phdr>(bitPattern: getauxval(atPhdr)) else { return nil }
        let programHeaders = UnsafeBufferPointer(start: headers, count: count)
        guard let phdr = programHeaders.first(where: { $0.p_type == UInt32(PT_PHDR) }),
              let dynamic = programHeaders.first(where: { $0.p_type == UInt32(PT_DYNAMIC) })
        else { return nil }
        let base = UInt(bitPattern: headers) - UInt(phdr.p_vaddr)
        guard var entry = UnsafePointer<Elf64_Dyn>(bitPattern: base + UInt(dynamic.p_vaddr)) else { return nil }
        var start: UInt?
        var size: UInt?
        while entry.pointee.d_tag != Int64(DT_NULL) {
            switch entry.pointee.d_tag {
            case Int64(DT_RELA): start = UInt(entry.pointee.d_un.d_ptr)
            case Int64(DT_RELASZ): size = UInt(entry.pointee.d_un.d_val)
            default: break
            }
            entry += 1
        }
        guard var start, let size, size > 0 else { return nil }
        // glibc rewrites the dynamic section's addresses to run-time ones; read either form.
        if start < base { start += base }
        return (start, size)
    }
}
