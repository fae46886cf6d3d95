with lines as (
    select
        b.genre,
        o.quantity,
        o.quantity * o.unit_price * (1 - coalesce(o.discount_pct, 0) / 100.0) as paid
    from {{ source('raw', 'orders') }} as o
    join {{ source('raw', 'books') }} as b on b.book_id = o.book_id
),
per_genre as (
    select genre, sum(quantity) as books_sold, sum(paid) as revenue
    from lines
    group by genre
),
in_print as (
    select genre, count(*) filter (where cast(in_print as boolean)) as titles_in_print
    from {{ source('raw', 'books') }}
    group by genre
)
select
    g.genre,
    g.books_sold,
    g.revenue,
    100 * g.revenue / (select sum(revenue) from per_genre) as revenue_share_pct,
    coalesce(i.titles_in_print, 0) as titles_in_print
from per_genre as g
left join in_print as i on i.genre = g.genre
