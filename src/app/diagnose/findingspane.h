// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include <memory>

class QTreeView;

namespace Ui {
class FindingsPane;
}

namespace moetune {

class FindingsFilterModel;
class FindingsModel;

// The Diagnose page's findings list (ui/findingspane.ui): the counts per severity, which are the list's
// filters, Copy all, the line that says when the findings are of another log, and the list itself.
// Rows are the diagnosis' (of the FindingsModel), not of the filtered list.
class FindingsPane : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPane(QWidget *parent = nullptr);
    ~FindingsPane() override;

    void setModel(FindingsModel *model);
    QTreeView *view() const;
    void updateCounts();
    QString countsText() const;
    // stale: the findings are of another log than the one shown (dimmed, still readable; text says why).
    void setStale(bool stale, const QString &text);
    void setCopyEnabled(bool enabled);
    int currentRow() const;
    // Selects row (filtered out or gone: the first one shown, or nothing); returns the row shown (-1).
    int selectRow(int row);
    // The next (+1) / previous (-1) row of the filtered list, wrapping (-1 when the list is empty).
    int adjacentRow(int step) const;

signals:
    void currentRowChanged(int row); // -1: none
    // A severity filter changed; row was current before (to select it again, or the first one shown).
    void filterChanged(int row);
    void copyAllClicked();

private:
    std::unique_ptr<Ui::FindingsPane> m_ui;
    FindingsModel *m_model = nullptr;
    FindingsFilterModel *m_filter;
};

} // namespace moetune
