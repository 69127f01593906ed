// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/severity.h"

#include <QSet>
#include <QSortFilterProxyModel>

namespace moetune {

// The findings list as the severity buttons above it filter it (errors / warnings / info shown or not).
class FindingsFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit FindingsFilterModel(QObject *parent = nullptr);

    void setSeverityShown(Severity severity, bool shown);
    bool isSeverityShown(Severity severity) const { return !m_hidden.contains(int(severity)); }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QSet<int> m_hidden;
};

} // namespace moetune
