// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/findingsfiltermodel.h"

#include "app/diagnose/findingsmodel.h"

namespace moetune {

FindingsFilterModel::FindingsFilterModel(QObject *parent)
    : QSortFilterProxyModel(parent) {
    setObjectName(QStringLiteral("findingsFilterModel"));
}

void FindingsFilterModel::setSeverityShown(Severity severity, bool shown) {
    if (shown == isSeverityShown(severity))
        return;
    if (shown)
        m_hidden.remove(int(severity));
    else
        m_hidden.insert(int(severity));
    invalidateFilter();
}

bool FindingsFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const {
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    return !m_hidden.contains(index.data(FindingsModel::SeverityRole).toInt());
}

} // namespace moetune
