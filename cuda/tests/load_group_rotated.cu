// Host check of load_group_rotated and group_rotation (persistent/runs_work.cuh): every rotation yields the
// same items as the plain load, and the worst bank-group multiplicity of a quarter warp per layout.
// No GPU needed (host code only). From the repository root:
//   $NVCC -std=c++17 --expt-relaxed-constexpr -Icuda -c cuda/tests/load_group_rotated.cu -o /tmp/lgr.o
//   g++ /tmp/lgr.o -o /tmp/lgr -L$(dirname $NVCC)/../lib -lcudart_static -ldl -lpthread -lrt && /tmp/lgr
// (not under cuda/kernels/: build.rs compiles only that folder).
#include "../persistent/runs_work.cuh"
#include <cstdio>
#include <cstdlib>
using namespace lookback;
template <class T, int N> int check_values() {
    alignas(16) T src[N]; int bad = 0;
    for (int i = 0; i < N; ++i) { unsigned long long r = 0x9E3779B97F4A7C15ull * (i + 1); memcpy(&src[i], &r, sizeof(T)); }
    for (int rot = 0; rot < 8; ++rot) {
        T a[N], b[N];
        load_group(src, a);
        load_group_rotated(src, b, rot & (N * (int)sizeof(T) / 16 > 0 ? N * (int)sizeof(T) / 16 - 1 : 0));
        for (int i = 0; i < N; ++i) bad += memcmp(&a[i], &b[i], sizeof(T)) != 0;
    }
    return bad;
}
// Max bank-group multiplicity of a quarter warp's 16-byte loads at step c.
template <int NC, int STRIDE> int worst() {
    int w = 0;
    for (int q = 0; q < 4; ++q) for (int c = 0; c < NC; ++c) {
        int cnt[8] = {};
        for (int l = 8 * q; l < 8 * q + 8; ++l) {
            int rot = group_rotation<NC, STRIDE>(l);
            long addr = (long)l * STRIDE + 16 * ((c + rot) & (NC - 1));
            cnt[(addr / 16) % 8]++;
        }
        for (int i = 0; i < 8; ++i) w = cnt[i] > w ? cnt[i] : w;
    }
    return w;
}
int main() {
    int bad = check_values<uint32_t, 16>() + check_values<uint8_t, 64>() + check_values<uint64_t, 8>() +
              check_values<uint16_t, 32>() + check_values<uint64_t, 16>() + check_values<uint32_t, 8>() +
              check_values<__half, 32>() + check_values<double, 8>() + check_values<uint8_t, 8>();
    printf("value mismatches: %d\n", bad);
    printf("i32+i32 keys (NC4,S64): %d  i32 keys-only (NC4,S128): %d  u8 keys-only (NC4,S128): %d  KB2 (NC2,S32): %d  f64 vals KB1 (NC4,S64): %d  NC1 S16: %d\n",
           worst<4, 64>(), worst<4, 128>(), worst<4, 128>(), worst<2, 32>(), worst<4, 64>(), worst<1, 16>());
    return bad != 0;
}
