with per_customer as (
    select
        customer_id,
        count(*) as orders,
        sum(quantity) as books_bought,
        sum(quantity * unit_price * (1 - coalesce(discount_pct, 0) / 100.0)) as total_spent,
        min(cast(order_date as date)) as first_order_date
    from {{ source('raw', 'orders') }}
    group by customer_id
)
select
    c.customer_id,
    c.name as customer_name,
    coalesce(o.orders, 0) as orders,
    coalesce(o.books_bought, 0) as books_bought,
    coalesce(o.total_spent, 0) as total_spent,
    o.first_order_date,
    cast(c.is_member as boolean) as is_member
from {{ source('raw', 'customers') }} as c
left join per_customer as o on o.customer_id = c.customer_id
