// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/sourcelist.h"

#include <QList>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

struct Numbered {
    QString prefix; // "TP", "DP0 TP", "VllmWorker TP"
    int number = -1;
};

// "TP3" -> {"TP", 3}; "VllmWorker TP3 pid=77" -> {"VllmWorker TP", 3}; "main", "pid=7" -> number -1.
Numbered split(const QString &source) {
    QStringView s(source);
    const qsizetype pid = s.lastIndexOf(u" pid="_s);
    if (pid > 0)
        s = s.first(pid);
    qsizetype digits = s.size();
    while (digits > 0 && s[digits - 1].isDigit())
        --digits;
    const qsizetype count = s.size() - digits;
    // A bare number or a huge one is a name, not a rank.
    if (count == 0 || count > 6 || digits == 0 || s[digits - 1] == u'=')
        return {};
    return {s.first(digits).toString(), s.sliced(digits).toInt()};
}

} // namespace

QString compactSources(const QStringList &sources, int maxGroups) {
    struct Group {
        QString prefix;
        QString single; // the source as printed, for a group of one
        QList<int> numbers;
    };
    QList<Group> groups;
    for (const QString &source : sources) {
        const Numbered n = split(source);
        auto it =
            n.number < 0 ? groups.end() : std::find_if(groups.begin(), groups.end(), [&](const Group &g) {
                return !g.numbers.isEmpty() && g.prefix == n.prefix;
            });
        if (it == groups.end()) {
            Group g;
            g.prefix = n.prefix;
            g.single = source;
            if (n.number >= 0)
                g.numbers.append(n.number);
            groups.append(g);
        } else {
            it->numbers.append(n.number);
        }
    }
    QStringList parts;
    for (Group &g : groups) {
        std::sort(g.numbers.begin(), g.numbers.end());
        g.numbers.erase(std::unique(g.numbers.begin(), g.numbers.end()), g.numbers.end());
        if (g.numbers.size() <= 1) {
            parts.append(g.single);
            continue;
        }
        QStringList runs;
        for (qsizetype i = 0; i < g.numbers.size();) {
            qsizetype j = i;
            while (j + 1 < g.numbers.size() && g.numbers[j + 1] == g.numbers[j] + 1)
                ++j;
            runs.append(j == i ? QString::number(g.numbers[i])
                               : QString::number(g.numbers[i]) + u'-' + QString::number(g.numbers[j]));
            i = j + 1;
        }
        parts.append(g.prefix + runs.join(u','));
    }
    if (maxGroups > 0 && parts.size() > maxGroups) {
        const qsizetype rest = parts.size() - maxGroups;
        parts.resize(maxGroups);
        parts.back() += u" +"_s + QString::number(rest) + u" more"_s;
    }
    return parts.join(u", "_s);
}

} // namespace moetune
