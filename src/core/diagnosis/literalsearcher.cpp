// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/literalsearcher.h"

#include <QtGlobal>

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#include <immintrin.h>
#include <tmmintrin.h>
#define MOETUNE_TEDDY 1
#endif

namespace moetune {

namespace {

constexpr unsigned tableSize = 8192; // 8 KB of shifts stays in L1 cache

// Hash of the three bytes p[0..2].
inline unsigned block(const char *p) {
    const unsigned b0 = static_cast<unsigned char>(p[0]);
    const unsigned b1 = static_cast<unsigned char>(p[1]);
    const unsigned b2 = static_cast<unsigned char>(p[2]);
    return ((b0 << 7) ^ (b1 << 4) ^ b2 ^ (b1 >> 4)) & (tableSize - 1);
}

// Rough frequency of a byte in server logs: the fingerprint avoids common ones.
double commonness(unsigned char c) {
    if (c == ' ')
        return 10;
    if (std::strchr("etaoinsr", c))
        return 6;
    if (c >= 'a' && c <= 'z')
        return 3;
    if (c >= '0' && c <= '9')
        return 5;
    if (c >= 'A' && c <= 'Z')
        return 3; // log prefixes are full of capitals (INFO, TP, WARNING)
    if (std::strchr(".:,/[]", c))
        return 3;
    return 0.5;
}

inline unsigned gramHash(const char *p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return (v * 2654435761u) >> 16;
}

#if defined(MOETUNE_TEDDY)
bool cpuHasSsse3() {
    static const bool has = __builtin_cpu_supports("ssse3");
    return has;
}

bool cpuHasAvx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}

__attribute__((target("avx2"))) inline __m256i teddyMask256(const char *p, const std::uint8_t (*lo)[16],
                                                            const std::uint8_t (*hi)[16]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256i acc = _mm256_set1_epi8(static_cast<char>(0xff));
    for (int k = 0; k < 4; ++k) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + k));
        const __m256i l = _mm256_and_si256(v, low4);
        const __m256i h = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        const __m256i tl =
            _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i *>(lo[k])));
        const __m256i th =
            _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i *>(hi[k])));
        acc = _mm256_and_si256(acc, _mm256_and_si256(_mm256_shuffle_epi8(tl, l), _mm256_shuffle_epi8(th, h)));
    }
    return acc;
}

// Bucket bits of the 16 anchor positions starting at p (needs p[0..18] readable).
__attribute__((target("ssse3"))) inline __m128i teddyMask(const char *p, const std::uint8_t (*lo)[16],
                                                          const std::uint8_t (*hi)[16]) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i acc = _mm_set1_epi8(static_cast<char>(0xff));
    for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + k));
        const __m128i l = _mm_and_si128(v, low4);
        const __m128i h = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
        const __m128i tl = _mm_load_si128(reinterpret_cast<const __m128i *>(lo[k]));
        const __m128i th = _mm_load_si128(reinterpret_cast<const __m128i *>(hi[k]));
        acc = _mm_and_si128(acc, _mm_and_si128(_mm_shuffle_epi8(tl, l), _mm_shuffle_epi8(th, h)));
    }
    return acc;
}
#endif

} // namespace

LiteralSearcher::LiteralSearcher(const QList<QByteArray> &literals) {
    for (const QByteArray &l : literals) {
        if (!l.isEmpty() && !m_literals.contains(l))
            m_literals.append(l);
    }
    if (m_literals.isEmpty())
        return;
    m_window = m_literals.front().size();
    for (const QByteArray &l : m_literals) {
        m_window = std::min(m_window, l.size());
        m_maxLength = std::max(m_maxLength, l.size());
    }
    // A window over 255 would overflow the shift table and brings nothing more.
    m_window = std::min<qsizetype>(m_window, 255);
    if (m_window < 4)
        return; // very short literals: a plain search per literal
    m_shift.assign(tableSize, static_cast<std::uint8_t>(m_window - 2));
    m_candidateIndex.assign(tableSize, -1);
    for (int i = 0; i < m_literals.size(); ++i) {
        const char *p = m_literals[i].constData();
        for (qsizetype j = 0; j + 2 < m_window; ++j) {
            const unsigned b = block(p + j);
            const auto s = static_cast<std::uint8_t>(m_window - 3 - j);
            m_shift[b] = std::min(m_shift[b], s);
        }
        const unsigned last = block(p + m_window - 3);
        if (m_candidateIndex[last] < 0) {
            m_candidateIndex[last] = static_cast<std::int32_t>(m_candidates.size());
            m_candidates.emplace_back();
        }
        m_candidates[static_cast<size_t>(m_candidateIndex[last])].push_back(i);
    }

    std::vector<qsizetype> anchors;
    for (const QByteArray &l : m_literals) {
        qsizetype best = 0;
        double bestScore = 1e18;
        for (qsizetype a = 0; a + 4 <= l.size(); ++a) {
            double score = 1;
            for (int k = 0; k < 4; ++k)
                score *= commonness(static_cast<unsigned char>(l[a + k]));
            if (score < bestScore) {
                bestScore = score;
                best = a;
            }
        }
        anchors.push_back(best);
    }
    for (int c = 0; c < 256; ++c)
        m_byteFreq[static_cast<size_t>(c)] = commonness(static_cast<unsigned char>(c)) / 200.0;
    buildTeddy(anchors);
}

void LiteralSearcher::adapt(QByteArrayView sample) {
    if (m_window < 4 || sample.size() < 4096)
        return;
    // Approximate counts of every four-byte window of the sample, hashed into 64K cells.
    std::vector<std::uint32_t> counts(65536, 0);
    std::array<double, 256> bytes{};
    const char *d = sample.data();
    for (qsizetype i = 0; i + 4 <= sample.size(); ++i) {
        ++counts[gramHash(d + i)];
        bytes[static_cast<unsigned char>(d[i])] += 1;
    }
    for (int c = 0; c < 256; ++c)
        m_byteFreq[static_cast<size_t>(c)] =
            (bytes[static_cast<size_t>(c)] + 0.5) / static_cast<double>(sample.size());
    std::vector<qsizetype> anchors;
    for (const QByteArray &l : m_literals) {
        qsizetype best = 0;
        double bestScore = 1e18;
        for (qsizetype a = 0; a + 4 <= l.size(); ++a) {
            double score = counts[gramHash(l.constData() + a)] * 1000.0;
            double common = 1;
            for (int k = 0; k < 4; ++k)
                common *= bytes[static_cast<unsigned char>(l[a + k])] + 1;
            score += common / 1e24; // ties (often all zero): the rarer bytes
            if (score < bestScore) {
                bestScore = score;
                best = a;
            }
        }
        anchors.push_back(best);
    }
    buildTeddy(anchors);
}

void LiteralSearcher::buildTeddy(const std::vector<qsizetype> &anchors) {
#if defined(MOETUNE_TEDDY)
    if (!cpuHasSsse3() || m_window < 4)
        return;
    m_anchor = anchors;
    std::memset(m_lo, 0, sizeof(m_lo));
    std::memset(m_hi, 0, sizeof(m_hi));
    for (auto &b : m_buckets)
        b.clear();
    // Greedy buckets: put each literal where it adds the least to the expected rate of false
    // candidates, a bucket accepting every byte whose nibbles its literals' nibbles combine to.
    std::array<std::array<std::uint16_t, 4>, 8> loSets{}, hiSets{};
    auto acceptRate = [&](const std::array<std::uint16_t, 4> &lo, const std::array<std::uint16_t, 4> &hi) {
        double rate = 1;
        for (int k = 0; k < 4; ++k) {
            double p = 0;
            for (int c = 0; c < 256; ++c) {
                if ((lo[static_cast<size_t>(k)] >> (c & 15) & 1) &&
                    (hi[static_cast<size_t>(k)] >> (c >> 4) & 1))
                    p += m_byteFreq[static_cast<size_t>(c)];
            }
            rate *= p;
        }
        return rate;
    };
    for (int i = 0; i < m_literals.size(); ++i) {
        const char *f = m_literals[i].constData() + m_anchor[static_cast<size_t>(i)];
        int bestBucket = 0;
        double bestCost = 1e18;
        for (int b = 0; b < 8; ++b) {
            std::array<std::uint16_t, 4> lo = loSets[static_cast<size_t>(b)],
                                         hi = hiSets[static_cast<size_t>(b)];
            const bool empty = lo[0] == 0;
            const double before = empty ? 0 : acceptRate(lo, hi);
            for (int k = 0; k < 4; ++k) {
                const auto c = static_cast<unsigned char>(f[k]);
                lo[static_cast<size_t>(k)] |= static_cast<std::uint16_t>(1u << (c & 15));
                hi[static_cast<size_t>(k)] |= static_cast<std::uint16_t>(1u << (c >> 4));
            }
            const double cost = acceptRate(lo, hi) - before;
            if (cost < bestCost) {
                bestCost = cost;
                bestBucket = b;
            }
        }
        for (int k = 0; k < 4; ++k) {
            const auto c = static_cast<unsigned char>(f[k]);
            loSets[static_cast<size_t>(bestBucket)][static_cast<size_t>(k)] |=
                static_cast<std::uint16_t>(1u << (c & 15));
            hiSets[static_cast<size_t>(bestBucket)][static_cast<size_t>(k)] |=
                static_cast<std::uint16_t>(1u << (c >> 4));
            m_lo[k][c & 15] |= static_cast<std::uint8_t>(1u << bestBucket);
            m_hi[k][c >> 4] |= static_cast<std::uint8_t>(1u << bestBucket);
        }
        m_buckets[static_cast<size_t>(bestBucket)].push_back(i);
    }
    m_teddy = true;
    // MOETUNE_SIMD=ssse3 keeps the 16-byte path (tests cover both on AVX2 machines).
    m_avx2 = cpuHasAvx2() && qgetenv("MOETUNE_SIMD") != "ssse3";
#else
    Q_UNUSED(anchors);
#endif
}

qsizetype LiteralSearcher::findNext(QByteArrayView haystack, qsizetype from) const {
    if (m_literals.isEmpty() || from < 0 || from >= haystack.size())
        return -1;
    if (m_window < 4)
        return findNaive(haystack, from);
    if (m_teddy)
        return m_avx2 ? findTeddyAvx2(haystack, from) : findTeddy(haystack, from);
    return findScalar(haystack, from);
}

quint64 LiteralSearcher::presentIn(QByteArrayView text) const {
    quint64 bits = 0;
    if (m_window < 4) {
        for (int i = 0; i < m_literals.size(); ++i) {
            if (text.contains(m_literals[i]))
                bits |= quint64(1) << std::min(i, 63);
        }
        return bits;
    }
    const char *data = text.data();
    const qsizetype size = text.size();
    const qsizetype m = m_window;
    for (qsizetype pos = 0; pos + m <= size;) {
        const unsigned b = block(data + pos + m - 3);
        const std::uint8_t s = m_shift[b];
        if (s != 0) {
            pos += s;
            continue;
        }
        for (int i : m_candidates[static_cast<size_t>(m_candidateIndex[b])]) {
            const QByteArray &l = m_literals[i];
            if (pos + l.size() <= size &&
                std::memcmp(data + pos, l.constData(), static_cast<size_t>(l.size())) == 0)
                bits |= quint64(1) << std::min(i, 63);
        }
        ++pos;
    }
    return bits;
}

qsizetype LiteralSearcher::findNaive(QByteArrayView haystack, qsizetype from) const {
    qsizetype best = -1;
    for (const QByteArray &l : m_literals) {
        const qsizetype at = haystack.indexOf(l, from);
        if (at >= 0 && (best < 0 || at < best))
            best = at;
    }
    return best;
}

qsizetype LiteralSearcher::findScalar(QByteArrayView haystack, qsizetype from) const {
    const char *data = haystack.data();
    const qsizetype size = haystack.size();
    const std::uint8_t *shift = m_shift.data();
    const qsizetype m = m_window;
    qsizetype pos = from;
    while (pos + m <= size) {
        const unsigned b = block(data + pos + m - 3);
        const std::uint8_t s = shift[b];
        if (s != 0) {
            pos += s;
            continue;
        }
        for (int i : m_candidates[static_cast<size_t>(m_candidateIndex[b])]) {
            const QByteArray &l = m_literals[i];
            if (pos + l.size() <= size &&
                std::memcmp(data + pos, l.constData(), static_cast<size_t>(l.size())) == 0)
                return pos;
        }
        ++pos;
    }
    return -1;
}

#if defined(MOETUNE_TEDDY)
__attribute__((target("ssse3"))) qsizetype LiteralSearcher::findTeddy(QByteArrayView haystack,
                                                                      qsizetype from) const {
    const char *data = haystack.data();
    const qsizetype size = haystack.size();
    qsizetype p = from;
    alignas(16) std::uint8_t lanes[16];
    const __m128i zero = _mm_setzero_si128();
    while (p + 19 <= size) {
        const __m128i mask = teddyMask(data + p, m_lo, m_hi);
        unsigned bits = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(mask, zero))) ^ 0xffffu;
        if (bits != 0) {
            _mm_store_si128(reinterpret_cast<__m128i *>(lanes), mask);
            while (bits != 0) {
                const int j = std::countr_zero(bits);
                bits &= bits - 1;
                unsigned buckets = lanes[j];
                while (buckets != 0) {
                    const int b = std::countr_zero(buckets);
                    buckets &= buckets - 1;
                    for (int i : m_buckets[static_cast<size_t>(b)]) {
                        const QByteArray &l = m_literals[i];
                        const qsizetype start = p + j - m_anchor[static_cast<size_t>(i)];
                        if (start >= from && start + l.size() <= size &&
                            std::memcmp(data + start, l.constData(), static_cast<size_t>(l.size())) == 0)
                            return start;
                    }
                }
            }
        }
        p += 16;
    }
    // The last few bytes: a literal whose fingerprint starts at or after p.
    const qsizetype tailFrom = std::max(from, p - m_maxLength);
    const qsizetype found = findNaive(haystack, tailFrom);
    return found;
}
__attribute__((target("avx2"))) qsizetype LiteralSearcher::findTeddyAvx2(QByteArrayView haystack,
                                                                         qsizetype from) const {
    const char *data = haystack.data();
    const qsizetype size = haystack.size();
    qsizetype p = from;
    alignas(32) std::uint8_t lanes[32];
    const __m256i zero = _mm256_setzero_si256();
    while (p + 35 <= size) {
        const __m256i mask = teddyMask256(data + p, m_lo, m_hi);
        unsigned bits = ~static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(mask, zero)));
        if (bits != 0) {
            _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), mask);
            while (bits != 0) {
                const int j = std::countr_zero(bits);
                bits &= bits - 1;
                unsigned buckets = lanes[j];
                while (buckets != 0) {
                    const int b = std::countr_zero(buckets);
                    buckets &= buckets - 1;
                    for (int i : m_buckets[static_cast<size_t>(b)]) {
                        const QByteArray &l = m_literals[i];
                        const qsizetype start = p + j - m_anchor[static_cast<size_t>(i)];
                        if (start >= from && start + l.size() <= size &&
                            std::memcmp(data + start, l.constData(), static_cast<size_t>(l.size())) == 0)
                            return start;
                    }
                }
            }
        }
        p += 32;
    }
    // The rest (under 35 bytes) with the 16-byte path and its own tail.
    const qsizetype rest = findTeddy(haystack, std::max(from, p - m_maxLength));
    return rest >= from ? rest : -1;
}
#else
qsizetype LiteralSearcher::findTeddy(QByteArrayView haystack, qsizetype from) const {
    return findScalar(haystack, from);
}

qsizetype LiteralSearcher::findTeddyAvx2(QByteArrayView haystack, qsizetype from) const {
    return findScalar(haystack, from);
}
#endif

} // namespace moetune
