/* sort.c - a stable merge sort and an int64 quicksort. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sample.h"

static void insertion(char *base, size_t n, size_t size, cmp_fn cmp,
		      char *tmp)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		memcpy(tmp, base + i * size, size);
		for (j = i; j > 0 && cmp(base + (j - 1) * size, tmp) > 0; j--)
			memcpy(base + j * size, base + (j - 1) * size, size);
		memcpy(base + j * size, tmp, size);
	}
}

static void merge_rec(char *base, size_t n, size_t size, cmp_fn cmp,
		      char *scratch)
{
	size_t mid, i, j, k;

	if (n <= 12) {
		insertion(base, n, size, cmp, scratch);
		return;
	}
	mid = n / 2;
	merge_rec(base, mid, size, cmp, scratch);
	merge_rec(base + mid * size, n - mid, size, cmp, scratch);
	if (cmp(base + (mid - 1) * size, base + mid * size) <= 0)
		return; /* already in order */
	memcpy(scratch, base, mid * size);
	i = 0;
	j = mid;
	k = 0;
	while (i < mid && j < n) {
		if (cmp(base + j * size, scratch + i * size) < 0) {
			memcpy(base + k * size, base + j * size, size);
			j++;
		} else {
			memcpy(base + k * size, scratch + i * size, size);
			i++;
		}
		k++;
	}
	if (i < mid)
		memcpy(base + k * size, scratch + i * size, (mid - i) * size);
}

void msort(void *base, size_t n, size_t size, cmp_fn cmp)
{
	char *scratch;

	if (n < 2)
		return;
	scratch = malloc((n / 2 + 1) * size);
	if (!scratch)
		abort();
	merge_rec(base, n, size, cmp, scratch);
	free(scratch);
}

static void swap64(int64_t *a, int64_t *b)
{
	int64_t t = *a;

	*a = *b;
	*b = t;
}

void isort_i64(int64_t *a, size_t n)
{
	while (n > 16) {
		size_t mid = n / 2, i = 0, j = n - 1;
		int64_t pivot;

		/* median of three */
		if (a[mid] < a[0])
			swap64(&a[mid], &a[0]);
		if (a[n - 1] < a[0])
			swap64(&a[n - 1], &a[0]);
		if (a[n - 1] < a[mid])
			swap64(&a[n - 1], &a[mid]);
		pivot = a[mid];
		for (;;) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap64(&a[i], &a[j]);
			i++;
			j--;
		}
		/* recurse into the smaller half, loop on the larger one */
		if (j + 1 < n - j - 1) {
			isort_i64(a, j + 1);
			a += j + 1;
			n -= j + 1;
		} else {
			isort_i64(a + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	{
		size_t i, j;

		for (i = 1; i < n; i++) {
			int64_t v = a[i];

			for (j = i; j > 0 && a[j - 1] > v; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
	}
}

int is_sorted_i64(const int64_t *a, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (a[i - 1] > a[i])
			return 0;
	return 1;
}
