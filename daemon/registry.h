/*
 * The few Windows registry values SDK discovery reads, behind one function so
 * the same discovery code runs on Linux. Newer HIP SDK installers write
 * HKLM\Software\AMD\ROCm\<X.Y> with an InstallDir value. On Windows the
 * implementation reads the registry (registry-win.c, with the Windows port);
 * everywhere else registry-file.c reads the same keys from a .reg file as
 * regedit exports it, at <root>/registry/HKLM.reg of a sandbox root, so tests
 * describe a machine's registry with the exact key names and value syntax.
 */
#ifndef ROCMD_REGISTRY_H
#define ROCMD_REGISTRY_H

/* Called per subkey of HKLM\Software\AMD\ROCm: KEY is its name ("6.2"),
 * INSTALL_DIR its InstallDir value or NULL when the key has none. A non-zero
 * return stops the walk and is returned. */
typedef int (*rocmd_registry_rocm_fn)(const char *key, const char *install_dir, void *ctx);

/* Walks HKLM\Software\AMD\ROCm on the machine under ROOT. Returns 0 (also
 * when the key does not exist), a callback's value, or a negative error. */
int rocmd_registry_rocm_installs(const char *root, rocmd_registry_rocm_fn fn, void *ctx);

#endif
