/* SPDX-License-Identifier: MIT */
/* Corpus replay for fuzz targets built without libFuzzer: calls
 * LLVMFuzzerTestOneInput on every regular file of the directory argv[1]
 * (each in a buffer of exactly its size, so sanitizers see overreads).
 * Exits non-zero if the directory is missing or holds no input. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	struct stat st;
	if (fstat(fileno(f), &st) < 0) {
		fclose(f);
		return -1;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf || fread(buf, 1, n, f) != n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "replay: no corpus directory %s\n", argv[1]);
		return 1;
	}
	/* sorted, so runs are reproducible */
	struct dirent **ents;
	closedir(d);
	int n = scandir(argv[1], &ents, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: cannot list %s\n", argv[1]);
		return 1;
	}
	unsigned done = 0, failed = 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		if (ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", argv[1], ents[i]->d_name);
			struct stat st;
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				if (run_file(path) < 0)
					failed++;
				else
					done++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	printf("replay: %u inputs from %s\n", done, argv[1]);
	if (!done) {
		fprintf(stderr, "replay: %s holds no inputs\n", argv[1]);
		return 1;
	}
	return failed ? 1 : 0;
}
