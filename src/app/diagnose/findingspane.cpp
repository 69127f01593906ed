// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/findingspane.h"

#include "app/diagnose/findingsfiltermodel.h"
#include "app/diagnose/findingsmodel.h"
#include "app/widgets/severitystyle.h"
#include "app/widgets/wrappingdelegate.h"
#include "ui_findingspane.h"

#include <QHeaderView>
#include <QPainter>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

constexpr Severity severities[3] = {Severity::Error, Severity::Warning, Severity::Info};

// The findings list's titles: wrapped (as WrappingDelegate measures), and a tuning job's members indented
// under the finding that heads it, with a connector, so that one up+down job reads as one group.
class FindingsDelegate : public QStyledItemDelegate {
public:
    explicit FindingsDelegate(QTreeView *view)
        : QStyledItemDelegate(view)
        , m_wrapping(new WrappingDelegate(view))
        , m_tree(view) {}

    static constexpr int memberIndent = 22;

    static bool isMember(const QModelIndex &index) {
        const int place = index.data(FindingsModel::JobRole).toInt();
        return index.column() == FindingsModel::TitleColumn &&
               (place == FindingsModel::JobMember || place == FindingsModel::JobLastMember);
    }

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override {
        if (!isMember(index)) {
            QStyledItemDelegate::paint(painter, option, index);
            return;
        }
        const QRect gutter(option.rect.left(), option.rect.top(), memberIndent, option.rect.height());
        painter->save();
        if (option.state & QStyle::State_Selected)
            painter->fillRect(gutter, option.palette.brush(QPalette::Highlight));
        painter->setPen(QPen(option.palette.color(QPalette::Mid), 1));
        const int x = gutter.left() + memberIndent / 2 - 2;
        const int mid = gutter.center().y();
        const bool last = index.data(FindingsModel::JobRole).toInt() == FindingsModel::JobLastMember;
        painter->drawLine(x, gutter.top(), x, last ? mid : gutter.bottom());
        painter->drawLine(x, mid, gutter.right() - 2, mid);
        painter->restore();
        QStyleOptionViewItem shifted = option;
        shifted.rect.setLeft(option.rect.left() + memberIndent);
        QStyledItemDelegate::paint(painter, shifted, index);
    }

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override {
        if (!isMember(index))
            return m_wrapping->sizeHint(option, index);
        // As WrappingDelegate measures, at the width the indent leaves.
        QStyleOptionViewItem opt = option;
        opt.features |= QStyleOptionViewItem::WrapText;
        int width = m_tree->header()->sectionSize(index.column()) - memberIndent;
        if (index.column() == m_tree->header()->logicalIndex(0))
            width -= m_tree->indentation() * (m_tree->rootIsDecorated() ? 1 : 0);
        opt.rect = QRect(0, 0, qMax(1, width), QWIDGETSIZE_MAX);
        QSize size = QStyledItemDelegate::sizeHint(opt, index);
        size.setWidth(size.width() + memberIndent);
        return size;
    }

private:
    WrappingDelegate *m_wrapping; // measures every other cell (a child of the view)
    QTreeView *m_tree;
};

} // namespace

FindingsPane::FindingsPane(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::FindingsPane>())
    , m_filter(new FindingsFilterModel(this)) {
    m_ui->setupUi(this);
    // The severity buttons are filters of the list.
    QToolButton *countButtons[3] = {m_ui->countError, m_ui->countWarning, m_ui->countInfo};
    for (int i = 0; i < 3; ++i) {
        QToolButton *b = countButtons[i];
        b->setIcon(SeverityStyle::icon(severities[i]));
        b->setIconSize(QSize(14, 14));
        const Severity severity = severities[i];
        connect(b, &QToolButton::toggled, this, [this, severity](bool shown) {
            const int row = currentRow();
            m_filter->setSeverityShown(severity, shown);
            emit filterChanged(row);
        });
    }
    m_ui->staleLabel->hide();
    connect(m_ui->copyDiagnosisButton, &QPushButton::clicked, this, &FindingsPane::copyAllClicked);
}

FindingsPane::~FindingsPane() = default;

void FindingsPane::setModel(FindingsModel *model) {
    m_model = model;
    m_filter->setSourceModel(model);
    QTreeView *findings = m_ui->findingsView;
    findings->setModel(m_filter);
    findings->header()->setSectionResizeMode(FindingsModel::TitleColumn, QHeaderView::Stretch);
    findings->header()->setSectionResizeMode(FindingsModel::OccurrencesColumn, QHeaderView::ResizeToContents);
    findings->header()->setSectionResizeMode(FindingsModel::SourcesColumn, QHeaderView::ResizeToContents);
    // Titles wrap at the column's width (shown whole down to the minimum window size, never elided).
    findings->setItemDelegate(new FindingsDelegate(findings));
    connect(findings->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                emit currentRowChanged(current.isValid() ? m_filter->mapToSource(current).row() : -1);
            });
}

QTreeView *FindingsPane::view() const {
    return m_ui->findingsView;
}

void FindingsPane::updateCounts() {
    const Diagnosis &d = m_model->diagnosis();
    QToolButton *buttons[3] = {m_ui->countError, m_ui->countWarning, m_ui->countInfo};
    for (int i = 0; i < 3; ++i) {
        const int n = d.count(severities[i]);
        buttons[i]->setText(QString::number(n) + u' ' +
                            (severities[i] == Severity::Info    ? tr("info")
                             : severities[i] == Severity::Error ? (n == 1 ? tr("error") : tr("errors"))
                                                                : (n == 1 ? tr("warning") : tr("warnings"))));
        buttons[i]->setEnabled(n > 0);
    }
}

QString FindingsPane::countsText() const {
    return QStringList{m_ui->countError->text(), m_ui->countWarning->text(), m_ui->countInfo->text()}.join(
        u", "_s);
}

void FindingsPane::setStale(bool stale, const QString &text) {
    if (stale)
        m_ui->staleLabel->setText(text);
    m_ui->staleLabel->setVisible(stale);
    m_ui->findingsView->setEnabled(!stale);
}

void FindingsPane::setCopyEnabled(bool enabled) {
    m_ui->copyDiagnosisButton->setEnabled(enabled);
}

int FindingsPane::currentRow() const {
    const QModelIndex current = m_ui->findingsView->currentIndex();
    return current.isValid() ? m_filter->mapToSource(current).row() : -1;
}

int FindingsPane::selectRow(int row) {
    const QModelIndex index = row >= 0 && row < m_model->rowCount()
                                  ? m_filter->mapFromSource(m_model->index(row, 0))
                                  : QModelIndex();
    if (!index.isValid()) {
        // Filtered out or gone: the first one shown, else nothing.
        const QModelIndex first = m_filter->index(0, 0);
        if (first.isValid() && row >= 0) {
            m_ui->findingsView->selectionModel()->setCurrentIndex(first, QItemSelectionModel::ClearAndSelect |
                                                                             QItemSelectionModel::Rows);
            return m_filter->mapToSource(first).row();
        }
        m_ui->findingsView->setCurrentIndex({});
        return -1;
    }
    m_ui->findingsView->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                                     QItemSelectionModel::Rows);
    return row;
}

int FindingsPane::adjacentRow(int step) const {
    const int rows = m_filter->rowCount();
    if (rows == 0)
        return -1;
    const QModelIndex current = m_ui->findingsView->currentIndex();
    const int at = current.isValid() ? current.row() : (step > 0 ? -1 : 0);
    const int next = ((at + step) % rows + rows) % rows;
    return m_filter->mapToSource(m_filter->index(next, 0)).row();
}

} // namespace moetune
