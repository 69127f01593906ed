// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/progressline.h"

#include "cli/console.h"

#include <QLocale>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {
// Short runs never flicker a progress line.
constexpr qint64 kQuietMs = 300;
constexpr qint64 kRedrawMs = 100;
} // namespace

ProgressLine::ProgressLine(QString label)
    : m_label(std::move(label))
    , m_enabled(Console::stderrIsTerminal()) {
    m_started.start();
}

ProgressLine::~ProgressLine() {
    if (m_drawn)
        Console::errControl(u"\r\x1b[2K"_s);
}

bool ProgressLine::update(qint64 done, qint64 total) {
    if (!m_enabled)
        return true;
    const qint64 now = m_started.elapsed();
    if (now < kQuietMs || (m_lastDraw >= 0 && now - m_lastDraw < kRedrawMs))
        return true;
    m_lastDraw = now;
    const QLocale c = QLocale::c();
    QString text = u"diagnosing "_s + m_label + u": "_s;
    if (total > 0)
        text += QString::number(std::clamp<qint64>(done * 100 / total, 0, 100)) + u"% ("_s +
                c.formattedDataSize(done, 1, QLocale::DataSizeTraditionalFormat) + u" of "_s +
                c.formattedDataSize(total, 1, QLocale::DataSizeTraditionalFormat) + u')';
    else
        text += c.formattedDataSize(done, 1, QLocale::DataSizeTraditionalFormat) + u" read"_s;
    Console::errControl(u"\r\x1b[2K"_s);
    Console::err(text);
    m_drawn = true;
    return true;
}

} // namespace moetune::cli
