/*
 * The few Windows registry values SDK discovery reads, behind two functions
 * so the same discovery code runs on Linux. Newer HIP SDK installers write
 * HKLM\Software\AMD\ROCm\<X.Y> with an InstallDir value; every installer
 * sets HIP_PATH and HIP_PATH_NN in the machine environment, which a service
 * does not inherit once it runs (the SCM hands it the environment of boot
 * time), so it is read from HKLM\SYSTEM\CurrentControlSet\Control\Session
 * Manager\Environment at every scan. On Windows registry-win.c reads the
 * registry itself (wide-character API, values converted to UTF-8), always the
 * machine's, also under --root; everywhere else registry-file.c reads the
 * same keys from a .reg file as regedit exports it, at
 * <root>/registry/HKLM.reg of a sandbox root, so tests describe a machine's
 * registry with the exact key names and value syntax.
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

/* Called per string value of the machine environment: NAME ("HIP_PATH_62")
 * and VALUE, with %VARIABLES% of an expandable value expanded. A non-zero
 * return stops the walk and is returned. */
typedef int (*rocmd_registry_env_fn)(const char *name, const char *value, void *ctx);

/* Walks HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment
 * on the machine under ROOT. Returns 0 (also when there is none), a
 * callback's value, or a negative error. */
int rocmd_registry_machine_env(const char *root, rocmd_registry_env_fn fn, void *ctx);

#endif
