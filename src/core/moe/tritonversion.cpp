// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe/tritonversion.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

TritonVersion::TritonVersion(int major, int minor, int patch)
    : m_major(major)
    , m_minor(minor)
    , m_patch(patch) {}

std::optional<TritonVersion> TritonVersion::parse(QStringView s) {
    // A folder name (possibly at the end of a path) uses '_', a version string '.'.
    static const QRegularExpression folderRe =
        precompiledRegex(u"(?:^|[/\\\\])triton_(\\d{1,4})_(\\d{1,4})(?:_(\\d{1,4}))?[/\\\\]?$"_s);
    static const QRegularExpression versionRe =
        precompiledRegex(u"^\\s*v?(\\d{1,4})\\.(\\d{1,4})(?:\\.(\\d{1,4}))?(?:[+.\\-a-zA-Z].*)?\\s*$"_s);
    QRegularExpressionMatch m = folderRe.match(s.toString());
    if (!m.hasMatch())
        m = versionRe.match(s.toString());
    if (!m.hasMatch())
        return std::nullopt;
    const int patch = m.capturedLength(3) > 0 ? m.capturedView(3).toInt() : 0;
    return TritonVersion(m.capturedView(1).toInt(), m.capturedView(2).toInt(), patch);
}

QString TritonVersion::toString() const {
    return QString::number(m_major) + u'.' + QString::number(m_minor) + u'.' + QString::number(m_patch);
}

QString TritonVersion::folderName() const {
    return u"triton_"_s + QString::number(m_major) + u'_' + QString::number(m_minor) + u'_' +
           QString::number(m_patch);
}

} // namespace moetune
