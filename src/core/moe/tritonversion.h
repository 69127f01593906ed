// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringView>

#include <compare>
#include <optional>

namespace moetune {

// A Triton release as SGLang names its config folders: 3.6.0 <-> "triton_3_6_0".
class TritonVersion {
public:
    TritonVersion() = default;
    TritonVersion(int major, int minor, int patch);

    // Accepts "3.6.0", "3.6", "3.6.0+git1234", "triton_3_6_0" (and a path ending in that folder name).
    static std::optional<TritonVersion> parse(QStringView s);

    QString toString() const;   // "3.6.0"
    QString folderName() const; // "triton_3_6_0"

    int major() const { return m_major; }
    int minor() const { return m_minor; }
    int patch() const { return m_patch; }

    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 reports the literal 0 of the synthesised <=>
    friend auto operator<=>(const TritonVersion &, const TritonVersion &) = default;
    friend bool operator==(const TritonVersion &, const TritonVersion &) = default;

private:
    int m_major = 0;
    int m_minor = 0;
    int m_patch = 0;
};

} // namespace moetune
