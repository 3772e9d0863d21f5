// The part of the C++ standard library the engine uses: fixed-width integers, their limits, and a few
// type traits.
//
// nvcc builds the engine with the host compiler's headers. NVRTC, which can compile these same headers at
// run time (with user code), ships no standard headers, and the CUDA headers that could stand in (libcu++)
// are not on a user's machine unless the toolkit is. So under NVRTC this file defines exactly the names
// the engine needs, in namespace std so that the engine's code reads the same under both compilers. A
// name the engine starts to use must be added here too, or an NVRTC compile of the engine fails.
#pragma once

#ifndef __CUDACC_RTC__
#include <cmath>
#include <cstdint>
#include <type_traits>
#else

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
static_assert(sizeof(void*) == 8, "the engine is built for 64-bit devices");

#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 0xff
#define UINT16_MAX 0xffff
#define UINT32_MAX 0xffffffffu
#define UINT64_MAX 0xffffffffffffffffull
// <cmath>'s float constants; the math functions themselves (isfinite, …) are NVRTC built-ins.
#define NAN __int_as_float(0x7fffffff)
#define INFINITY __int_as_float(0x7f800000)

namespace std {

template <class T, T V> struct integral_constant {
    static constexpr T value = V;
    using value_type = T;
    using type = integral_constant;
    __host__ __device__ constexpr operator value_type() const noexcept { return value; }
};
template <bool B> using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;

template <class T, class U> struct is_same : false_type {};
template <class T> struct is_same<T, T> : true_type {};
template <class T, class U> inline constexpr bool is_same_v = is_same<T, U>::value;

template <bool B, class T, class F> struct conditional { using type = T; };
template <class T, class F> struct conditional<false, T, F> { using type = F; };
template <bool B, class T, class F> using conditional_t = typename conditional<B, T, F>::type;

template <class...> using void_t = void;

template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };

template <class T> struct is_integral_base : false_type {};
#define LOOKBACK_STD_INTEGRAL(T) \
    template <> struct is_integral_base<T> : true_type {};
LOOKBACK_STD_INTEGRAL(bool)
LOOKBACK_STD_INTEGRAL(char)
LOOKBACK_STD_INTEGRAL(signed char)
LOOKBACK_STD_INTEGRAL(unsigned char)
LOOKBACK_STD_INTEGRAL(short)
LOOKBACK_STD_INTEGRAL(unsigned short)
LOOKBACK_STD_INTEGRAL(int)
LOOKBACK_STD_INTEGRAL(unsigned int)
LOOKBACK_STD_INTEGRAL(long)
LOOKBACK_STD_INTEGRAL(unsigned long)
LOOKBACK_STD_INTEGRAL(long long)
LOOKBACK_STD_INTEGRAL(unsigned long long)
#undef LOOKBACK_STD_INTEGRAL
template <class T> struct is_integral : is_integral_base<typename remove_cv<T>::type> {};
template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;

template <class T> struct is_floating_point_base : false_type {};
template <> struct is_floating_point_base<float> : true_type {};
template <> struct is_floating_point_base<double> : true_type {};
template <class T> struct is_floating_point : is_floating_point_base<typename remove_cv<T>::type> {};
template <class T> inline constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> inline constexpr bool is_arithmetic_v = is_integral_v<T> || is_floating_point_v<T>;

// Only what the engine asks of it: the unsigned type of a signed or unsigned integer of its size.
template <int BYTES> struct unsigned_of_size;
template <> struct unsigned_of_size<1> { using type = unsigned char; };
template <> struct unsigned_of_size<2> { using type = unsigned short; };
template <> struct unsigned_of_size<4> { using type = unsigned int; };
template <> struct unsigned_of_size<8> { using type = unsigned long long; };
template <class T> struct make_unsigned {
    static_assert(is_integral_v<T> && !is_same_v<typename remove_cv<T>::type, bool>, "make_unsigned of a non-integer");
    using type = typename unsigned_of_size<sizeof(T)>::type;
};
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;

template <class T> __host__ __device__ T&& declval() noexcept;

}  // namespace std

#endif
