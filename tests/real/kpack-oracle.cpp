// kpack-oracle LIB ARCH...: load every HIPK code object of LIB through ROCm's own kpack
// loader (kpack_load_code_object, compiled unchanged from a fetched rocm-kpack snapshot by
// tests/real/kpack-oracle.sh), as the HIP runtime calls it: the .rocm_kpack_ref bytes as
// the metadata, the library's real path as binary_path (the name /proc/self/maps gives),
// the wrapper's reserved1 as co_index, ARCH... as the arch list (the device's ISA name,
// then its generic target). Prints one line per wrapper; exit 0 if every one loaded, 1 if
// any did not, 2 for a bad LIB.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rocm_kpack/kpack.h"

static uint64_t rd(const std::vector<unsigned char> &d, size_t off, int w)
{
	uint64_t v = 0;
	for (int i = w - 1; i >= 0; i--)
		v = v << 8 | d.at(off + (size_t)i);
	return v;
}

// the file offset and size of section name, or false
static bool section(const std::vector<unsigned char> &d, const char *name, size_t *off, size_t *size)
{
	size_t shoff = rd(d, 40, 8), ent = rd(d, 58, 2), n = rd(d, 60, 2), str = rd(d, 62, 2);
	size_t stroff = rd(d, shoff + str * ent + 24, 8);

	for (size_t i = 0; i < n; i++) {
		size_t h = shoff + i * ent;
		const char *s = (const char *)&d.at(stroff + rd(d, h, 4));
		if (strcmp(s, name) == 0) {
			*off = rd(d, h + 24, 8), *size = rd(d, h + 32, 8);
			return true;
		}
	}
	return false;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: kpack-oracle LIB ARCH...\n");
		return 2;
	}
	std::ifstream f(argv[1], std::ios::binary);
	std::vector<unsigned char> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	size_t wo, ws, ro, rs;
	if (d.size() < 64 || !section(d, ".hipFatBinSegment", &wo, &ws) || !section(d, ".rocm_kpack_ref", &ro, &rs)) {
		fprintf(stderr, "%s: no .hipFatBinSegment or .rocm_kpack_ref\n", argv[1]);
		return 2;
	}
	// the loader parses up to 64 KiB from the metadata pointer
	std::vector<unsigned char> meta(d.begin() + (long)ro, d.begin() + (long)(ro + rs));
	meta.resize(meta.size() + 65536);
	char *real = realpath(argv[1], nullptr);
	kpack_cache_t cache = nullptr;
	if (kpack_cache_create(&cache) != KPACK_SUCCESS)
		return 2;
	int bad = 0;
	for (size_t w = 0; w + 24 <= ws; w += 24) {
		if (rd(d, wo + w, 4) != 0x4B504948)  // HIPK
			continue;
		uint32_t co = (uint32_t)rd(d, wo + w + 16, 4);
		void *obj = nullptr;
		size_t size = 0;
		kpack_error_t e = kpack_load_code_object(cache, meta.data(), real, co, (const char *const *)argv + 2,
		                                         (size_t)argc - 2, &obj, &size);
		if (e == KPACK_SUCCESS)
			printf("co_index %u: loaded %zu bytes\n", co, size);
		else
			printf("co_index %u: error %d\n", co, (int)e), bad = 1;
		kpack_free_code_object(obj);
	}
	kpack_cache_destroy(cache);
	free(real);
	return bad;
}
