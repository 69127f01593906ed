// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <array>
#include <cstdint>
#include <vector>

namespace moetune {

// Finds occurrences of any of a set of byte literals in one pass. On x86-64 a SIMD filter
// ("Teddy": nibble lookup tables over a four-byte fingerprint of each literal, eight buckets)
// tests 16 positions per step and only verifies the rare candidates; elsewhere a Wu-Manber scan.
class LiteralSearcher {
public:
    explicit LiteralSearcher(const QList<QByteArray> &literals);

    // Start of an occurrence at or after from, or -1. No occurrence lies on an earlier line than
    // the one returned (the reader only needs the first line holding any literal).
    qsizetype findNext(QByteArrayView haystack, qsizetype from) const;

    // Which literals occur in text: bit i for literals()[i] (the 64th bit stands for all beyond).
    // Meant for short texts such as one line.
    quint64 presentIn(QByteArrayView text) const;

    // Re-picks each literal's fingerprint as its rarest four bytes in a sample of the input
    // (a log full of "cache" must not fingerprint "KV cache" on "cach").
    void adapt(QByteArrayView sample);

    const QList<QByteArray> &literals() const { return m_literals; }
    bool isEmpty() const { return m_literals.isEmpty(); }

private:
    void buildTeddy(const std::vector<qsizetype> &anchors);
    qsizetype findScalar(QByteArrayView haystack, qsizetype from) const;
    qsizetype findNaive(QByteArrayView haystack, qsizetype from) const;
    qsizetype findTeddy(QByteArrayView haystack, qsizetype from) const;
    qsizetype findTeddyAvx2(QByteArrayView haystack, qsizetype from) const;

    QList<QByteArray> m_literals;
    qsizetype m_window = 0;                     // shortest literal length (>= 4 in the table paths)
    std::vector<std::uint8_t> m_shift;          // Wu-Manber: indexed by the hash of a three-byte block
    std::vector<std::vector<int>> m_candidates; // literals whose window ends in the block, for shift 0
    std::vector<std::int32_t> m_candidateIndex; // block -> index into m_candidates, -1 if none

    // Teddy tables: for fingerprint byte k, the buckets accepting a low / high nibble.
    alignas(16) std::uint8_t m_lo[4][16] = {};
    alignas(16) std::uint8_t m_hi[4][16] = {};
    std::array<std::vector<int>, 8> m_buckets; // literal indices per bucket
    std::vector<qsizetype> m_anchor;           // offset of each literal's fingerprint
    std::array<double, 256> m_byteFreq{};      // estimated share of each byte value in the input
    qsizetype m_maxLength = 0;
    bool m_teddy = false;
    bool m_avx2 = false; // 32 positions per step where the CPU has AVX2
};

} // namespace moetune
